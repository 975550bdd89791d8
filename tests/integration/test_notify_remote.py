"""Notifications sent FROM the instance (issue 15), on a real sshd, to loopback servers that answer
like each service's documentation (tests/instance_notify_servers.py): the request shape of every scheme on
the python3 path (also an old python3, tests/oldpythons.py), the curl path and the wget path; a
job that fails with no gpu-tui process connected produces exactly one request naming the
failure; a dead target never delays the exit code; no secret in any process's command line."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from instance_notify_servers import NotifyServer
from oldpythons import require_old_python, version_of
from sshhelp import ssh_host
from waiting import until

from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobRequest, new_job_id
from gpu_tui.core.trainlog.hints import hint_for
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services import autostop as autostopsvc
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.notify import instance as nr

pytestmark = pytest.mark.sshd

DING_SECRET = "SECd1ngs3cr3tvalue0123456789abcdef0123456789abcdef0123456789abcd"  # 67 chars: > one HMAC block
FEISHU_SECRET = "fe1shus3cr3t"
TOKENS = (
    "dtok0123456789",
    DING_SECRET,
    "fstok0123456789",
    FEISHU_SECRET,
    "wkey0123456789",
    "SCT0123456789",
    "pp0123456789",
    "123456:ABCdefGHI",
    "jobtopic0123456789",
)
SH_TOOLS = (
    "sh",
    "cat",
    "sed",
    "awk",
    "tr",
    "od",
    "grep",
    "mktemp",
    "date",
    "rm",
    "mkdir",
    "wc",
    "head",
    "tail",
    "sleep",
    "mv",
    "openssl",
    "basename",
    "setsid",
    "nohup",
    "env",
    "cmp",
)


def urls(srv: NotifyServer) -> list[str]:
    return [
        f"json://127.0.0.1:{srv.port}/hooks/gpu?+X-Tag=gpu-tui",
        f"ntfy://127.0.0.1:{srv.port}/jobtopic0123456789?priority=high",
        f"feishu://fstok0123456789?secret={FEISHU_SECRET}",
        f"dingtalk://{DING_SECRET}@dtok0123456789/",
        "wecombot://wkey0123456789",
        "schan://SCT0123456789",
        "pushplus://pp0123456789",
        "tgram://123456:ABCdefGHI/4242",
        "slack://T000/B000/XXXX",  # laptop-only
    ]


@pytest.fixture
def server(monkeypatch) -> Iterator[NotifyServer]:
    srv = NotifyServer(secrets={"dingtalk": DING_SECRET, "feishu": FEISHU_SECRET}).start()
    monkeypatch.setenv("GPU_TUI_NOTIFY_BASE", srv.base)
    yield srv
    srv.stop()


def inst_of(sshd_instance, **kw) -> InstanceConfig:
    return InstanceConfig(name=sshd_instance.name, host=sshd_instance.host, port=sshd_instance.port, **kw)


async def connected(sshd_instance, tmp_path: Path) -> SshHost:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    return host


def state(sshd_instance) -> Path:
    return sshd_instance.home() / ".gpu-tui"


ZH_EXIT_HINT = "程序出错退出但没有 traceback: 日志的最后几行会说明原因"
ZH_OOM_HINT = (
    "显存不够: 减小 batch 并用梯度累积, 或开梯度检查点、bf16/fp16; `gpu-tui fit MODEL` 会算出模型在这张卡上需要多少显存"
)


def outbox(sshd_instance) -> list[dict]:
    path = state(sshd_instance) / "notify" / "outbox.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def tool_dir(tmp_path: Path, *, curl: bool) -> Path:
    """A PATH with the shell tools and curl (or GNU wget) but no python."""
    d = tmp_path / ("bin-curl" if curl else "bin-wget")
    d.mkdir()
    for tool in (*SH_TOOLS, "curl" if curl else "wget"):
        found = shutil.which(tool)
        assert found, tool
        (d / tool).symlink_to(found)
    return d


def check_shapes(srv: NotifyServer) -> None:
    """Every instance-side scheme's request as its service documents it, signatures verified."""
    by = {s.service: s for s in srv.seen}
    assert sorted(by) == ["dingtalk", "feishu", "json", "ntfy", "pushplus", "schan", "tgram", "wecombot"]
    assert len(srv.seen) == 8 and all(s.method == "POST" for s in srv.seen)
    assert all(s.headers["content-type"] == "application/json" for s in srv.seen)
    title = "gpu: gpu-tui test message"
    text = title + "\nSent by the instance itself: notifications work with the laptop closed."
    j = by["json"]
    assert j.path == "/hooks/gpu" and j.headers["x-tag"] == "gpu-tui"
    assert j.json == {"version": "1.0", "title": title, "message": text.split("\n")[1], "type": "info"}
    n = by["ntfy"]
    assert n.path == "/" and n.json["topic"] == "jobtopic0123456789" and n.json["title"] == title
    assert n.json["priority"] == 4
    f = by["feishu"]
    assert f.path == "/open-apis/bot/v2/hook/fstok0123456789" and f.verdict == "ok"
    assert f.json["msg_type"] == "text" and f.json["content"] == {"text": text}
    assert f.json["timestamp"].isdigit() and f.json["sign"]
    d = by["dingtalk"]
    assert d.path == "/robot/send" and d.query["access_token"] == "dtok0123456789" and d.verdict == "ok"
    assert len(d.query["timestamp"]) == 13 and d.json == {"msgtype": "text", "text": {"content": text}}
    w = by["wecombot"]
    assert w.query == {"key": "wkey0123456789"} and w.json == {"msgtype": "text", "text": {"content": text}}
    assert by["schan"].path == "/SCT0123456789.send"
    assert by["schan"].json == {"title": title, "desp": text.split("\n")[1]}
    p = by["pushplus"].json
    assert p == {"token": "pp0123456789", "title": title, "content": text.split("\n")[1], "template": "txt"}
    t = by["tgram"]
    assert t.path == "/bot123456:ABCdefGHI/sendMessage" and t.json == {"chat_id": "4242", "text": text}


async def test_install_ships_a_private_targets_file_and_warns_about_laptop_only(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        warnings = await nr.install_notify(host, inst, urls(server), ["job_end", "autostop", "balance"], "en")
        assert warnings == ["slack://****/****/****: not sent from the instance (slack: sent from the laptop only)"]
        doc = state(sshd_instance) / "notify" / "targets.json"
        assert doc.stat().st_mode & 0o777 == 0o600
        assert (state(sshd_instance) / "notify").stat().st_mode & 0o777 == 0o700
        data = json.loads(doc.read_text())
        assert data["events"] == ["autostop", "job_end"] and len(data["targets"]) == 8
        for f in (state(sshd_instance) / "notify" / "sh").iterdir():
            assert f.stat().st_mode & 0o077 == 0, f
        assert await nr.install_notify(host, inst, [], ["job_end"], "en") == []
        assert not doc.exists() and not (state(sshd_instance) / "notify" / "sh").exists()
        assert await nr.send_test_from_instance(host, inst) == []
    finally:
        await host.close()


async def test_every_scheme_from_python3(sshd_instance, tmp_path: Path, server: NotifyServer) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, urls(server), ["job_end"], "en")
        results = await nr.send_test_from_instance(host, inst)
        assert [r.ok for r in results] == [True] * 8, results
        assert all(tok not in r.target_masked for r in results for tok in TOKENS)
        check_shapes(server)
        sent = await nr.read_outbox(host, inst)
        assert len(sent) == 1 and sent[0].event == "test" and sent[0].ok and sent[0].via.startswith("python3.")
        assert await nr.read_outbox(host, inst, since=sent[0].at + 1) == []
    finally:
        await host.close()


@pytest.mark.parametrize("via", ["old-python3", "curl", "wget"])
async def test_every_scheme_without_a_modern_python(
    sshd_instance, tmp_path: Path, server: NotifyServer, via: str
) -> None:
    if via == "old-python3":
        old = require_old_python()[0]  # the oldest, or a skip saying how to provide one
        via = "python{}.{}".format(*version_of(old))
        path = tmp_path / "bin-old-python"
        path.mkdir()
        (path / "python3").symlink_to(old)
        path_value = f"{path}:/usr/bin:/bin"
    else:
        path_value = str(tool_dir(tmp_path, curl=via == "curl"))
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, urls(server), ["job_end"], "en")
        s = state(sshd_instance)
        res = await host.run(f"PATH={path_value} sh {s}/bin/notify-v1.sh {s} test", timeout=60)
        results = [json.loads(line) for line in res.stdout.splitlines()]
        assert [r["ok"] for r in results] == [True] * 8, res
        check_shapes(server)
        line = outbox(sshd_instance)[-1]
        assert line["via"] == via and line["event"] == "test"
        assert all(t["ok"] for t in line["targets"])
    finally:
        await host.close()


async def test_refusals_are_reported_with_the_service_words(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    server.fail = True
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, urls(server)[2:4], ["job_end"], "en")
        results = await nr.send_test_from_instance(host, inst)
        assert [r.ok for r in results] == [False, False]
        assert results[0].error == "code 9499: Bad Request" and results[0].attempts >= 1
        assert results[1].error == "errcode 300001: token is not exist"
        log = (state(sshd_instance) / "notify" / "sender.log").read_text()
        assert "errcode 300001" in log and all(tok not in log for tok in TOKENS)
    finally:
        await host.close()


async def test_a_failed_job_sends_one_message_naming_its_failure(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    inst = inst_of(sshd_instance, hourly_rate=3.6)
    host = await connected(sshd_instance, tmp_path)
    job_url = [f"json://127.0.0.1:{server.port}/hooks/jobs"]
    await nr.install_notify(host, inst, job_url, ["job_end"], "en")
    command = (
        "echo 'epoch 1/3 loss=0.91'; sleep 1; echo 'torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB'; exit 1"
    )
    req = await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command=command, name="train-a"))
    await host.close()  # nobody watching: the instance sends it alone
    await until(lambda: outbox(sshd_instance), timeout=60, what="the job's notice in the outbox")
    assert len(server.seen) == 1
    msg = server.seen[0].json
    assert msg["title"] == "gpu: job train-a failed: CUDA out of memory", msg
    assert "last loss 0.91" in msg["message"] and "exit code 1" in msg["message"] and "ran " in msg["message"]
    assert "cost ¥" in msg["message"]
    # what to do about it, on a line of its own (core/hints)
    assert msg["message"].splitlines()[-1] == hint_for("CUDA out of memory")
    line = outbox(sshd_instance)[0]
    assert line["id"] == f"job_end:{req.id}" and line["job"] == "train-a" and line["targets"][0]["ok"]
    # asked again (a runner restarted, a retry by hand): still one message
    s = state(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await host.run(f"sh {s}/bin/notify-v1.sh {s} job_end {s}/jobs/{req.id}", timeout=60)
        assert len(server.seen) == 1 and len(outbox(sshd_instance)) == 1
    finally:
        await host.close()


async def test_a_nan_loss_that_exits_zero_is_one_failure_notice(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, [f"json://127.0.0.1:{server.port}/h"], ["job_end"], "en")
        command = "echo 'step 10 loss=0.5'; echo 'step 20 loss=nan'; exit 0"
        await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command=command))
        await until(lambda: outbox(sshd_instance), timeout=60, what="the job's notice")
        assert len(server.seen) == 1
        assert server.seen[0].json["title"].endswith("failed: NaN loss")
    finally:
        await host.close()


async def test_the_curl_path_names_the_exit_code_in_chinese(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, [f"json://127.0.0.1:{server.port}/h"], ["job_end"], "zh-CN")
        path = tool_dir(tmp_path, curl=True)
        req = JobRequest(id=new_job_id(), command="exit 3")
        s = state(sshd_instance)
        await jobsvc.start_job(host, inst, req)
        await until(lambda: outbox(sshd_instance), timeout=60, what="the python3 notice")
        assert server.seen[0].json["title"] == f"gpu: 任务 {req.id} 失败: exit code 3"
        assert server.seen[0].json["message"].startswith("运行 ")
        assert server.seen[0].json["message"].splitlines()[-1] == ZH_EXIT_HINT
        # the same end, sent again as an instance without python3 would send it
        server.seen.clear()
        (s / "jobs" / req.id / "notified").unlink()
        res = await host.run(f"PATH={path} sh {s}/bin/notify-v1.sh {s} job_end {s}/jobs/{req.id}", timeout=60)
        assert res.ok, res
        assert len(server.seen) == 1 and server.seen[0].json["title"] == f"gpu: 任务 {req.id} 失败: exit code 3"
        assert server.seen[0].json["message"].startswith("运行 ") and "退出码 3" in server.seen[0].json["message"]
        assert server.seen[0].json["message"].splitlines()[-1] == ZH_EXIT_HINT
        assert outbox(sshd_instance)[-1]["via"] == "curl"
    finally:
        await host.close()


async def test_the_oom_killers_evidence_names_the_limit_in_both_senders(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    """The runner's `oom_kill` (test_jobs_oom makes a real one) turns a bare `killed` into the OOM
    killer with its limit, in the python3 sender and the curl one alike."""
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, [f"json://127.0.0.1:{server.port}/h"], ["job_end"], "en")
        req = JobRequest(id=new_job_id(), command="kill -9 $$")
        s = state(sshd_instance)
        await jobsvc.start_job(host, inst, req)
        await until(lambda: outbox(sshd_instance), timeout=60, what="the first notice")
        assert server.seen[0].json["title"] == f"gpu: job {req.id} failed: killed"
        job = s / "jobs" / req.id
        (job / "oom_kill").write_text(f"{24 << 30} cgroup\n")  # as the runner writes it
        reason = "killed (out of host memory: OOM killer, limit 24 GiB)"
        for path in (None, tool_dir(tmp_path, curl=True)):
            server.seen.clear()
            (job / "notified").unlink(missing_ok=True)
            env = f"PATH={path} " if path else ""
            res = await host.run(f"{env}sh {s}/bin/notify-v1.sh {s} job_end {job}", timeout=60)
            assert res.ok, res
            assert len(server.seen) == 1, path
            msg = server.seen[0].json
            assert msg["title"] == f"gpu: job {req.id} failed: {reason}", path
            assert msg["message"].splitlines()[-1] == hint_for(reason), path
        assert outbox(sshd_instance)[-1]["via"] == "curl"
    finally:
        await host.close()


async def test_under_the_hint_what_fit_says_and_which_disk_is_full(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    """The instance says what `jobs` says under the hint (its own copy of gpu-tui's core): what
    fit says of an OOM job's model, and which disk a job filled, in the user's language."""
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, [f"json://127.0.0.1:{server.port}/h"], ["job_end"], "zh-CN")
        oom = (
            "echo 'loading Qwen/Qwen2.5-7B-Instruct with lora'; echo 'torch.OutOfMemoryError: CUDA out of memory."
            " Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free.'; exit 1"
        )
        full = "echo \"OSError: [Errno 28] No space left on device: '$HOME/ckpt/epoch3.pt'\"; exit 1"
        crash = "printf 'def step():\\n    raise ValueError(\"bad\")\\nstep()\\n' > t.py && python3 t.py"
        for n, command in enumerate((oom, full, crash), start=1):
            await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command=command))
            await until(lambda n=n: len(outbox(sshd_instance)) >= n, timeout=60, what=f"notice {n}")
        bodies = [m.json["message"].splitlines() for m in server.seen]
    finally:
        await host.close()
    fit, disk = bodies[0][-1], bodies[1][-1]
    assert fit.startswith("`gpu-tui fit`: qwen2.5-7b 用 LoRA约需 ") and fit.endswith("这张卡共 23.6 GiB"), fit
    assert bodies[0][-2] == ZH_OOM_HINT
    assert disk.startswith("满的磁盘: ") and "已用 " in disk, disk
    where = "/".join(str(sshd_instance.home() / "t.py").split("/")[-3:])
    assert bodies[2][-1] == f"最后一帧: {where}:2 in step"


def cmdlines() -> list[str]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                out.append((p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
    return out


@pytest.mark.parametrize("via", ["python3", "curl", "wget"])
async def test_a_dead_target_delays_nothing_and_no_secret_is_on_a_command_line(
    sshd_instance, tmp_path: Path, server: NotifyServer, via: str
) -> None:
    server.hold = True  # accepts, never answers
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    s = state(sshd_instance)
    try:
        await nr.install_notify(host, inst, urls(server)[:8], ["job_end"], "en")
        # a short budget for this test (the shipped one is 8 s x 3 attempts within 30 s)
        doc = json.loads((s / "notify" / "targets.json").read_text())
        doc.update(timeout=2, attempts=2, budget=5)
        (s / "notify" / "targets.json").write_text(json.dumps(doc))
        (s / "notify" / "sh" / "settings").write_text("2\n2\n5\n0\n¥\n")
        if via in ("curl", "wget"):
            path = tool_dir(tmp_path, curl=via == "curl")
            await host.run(f"PATH={path} setsid -f sh {s}/bin/notify-v1.sh {s} test </dev/null >/dev/null 2>&1")
        else:
            req = JobRequest(id=new_job_id(), command="exit 0")
            started = time.time()
            await jobsvc.start_job(host, inst, req)
            await until(lambda: (s / "jobs" / req.id / "exit_code").exists(), timeout=30, what="the exit code")
            assert time.time() - started < 30
        await until(lambda: len(server.seen) >= 8, timeout=30, what="every request held open")
        if via == "python3":
            assert not outbox(sshd_instance)  # the exit code was there while the sender still waited
        leaked = [c for c in cmdlines() for tok in TOKENS if tok in c]
        assert leaked == []
        await until(lambda: outbox(sshd_instance), timeout=30, what="the sender to give up")
        line = outbox(sshd_instance)[-1]
        assert [t["ok"] for t in line["targets"]] == [False] * 8
        assert all(t["attempts"] >= 1 for t in line["targets"])
        sent_at = [x.at for x in server.seen]
        assert line["at"] - min(sent_at) <= 5 + 3  # the budget, plus a last attempt's timeout
    finally:
        server.release()
        await host.close()


async def test_autostop_says_it_is_shutting_down(sshd_instance, tmp_path: Path, server: NotifyServer) -> None:
    sshd_instance.set_utilization(0)
    sshd_instance.set_shutdown_delay(3)  # the provider's API takes a moment; the notices go first
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    await nr.install_notify(host, inst, [f"ntfy://127.0.0.1:{server.port}/boxes"], ["autostop"], "en")
    await autostopsvc.arm(host, inst, autostopsvc.AutostopPlan(idle_seconds=1, check_seconds=1, cpu_busy_cores=1000))
    await host.close()
    await until(lambda: len(server.seen) >= 2, timeout=30, what="about to shut down, then shut down")
    titles = [s.json["title"] for s in server.seen]
    assert titles == ["gpu: idle, autostop is shutting it down", "gpu: shut down by autostop"]
    sshd_instance.wait_powered_off(timeout=20)
    ids = [line["id"] for line in outbox(sshd_instance)]
    assert len(ids) == 2 and ids[0].startswith("autostop:") and ids[0].endswith(":about") and ids[1].endswith(":done")


def quick_watch(sshd_instance, grace: float) -> None:
    """Read a running job's log every second (the shipped default is 30 s) with this grace."""
    doc_path = state(sshd_instance) / "notify" / "targets.json"
    doc = json.loads(doc_path.read_text())
    doc.update(watch_seconds=1, failure_grace=grace)
    doc_path.write_text(json.dumps(doc))


async def test_the_budget_is_a_wall_even_for_a_sender_that_hangs(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    """A curl that ignores its own time limit (a loaded machine's forks did the same, seconds at a
    time) is stopped at the budget's end, and the outbox says so."""
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    s = state(sshd_instance)
    try:
        await nr.install_notify(host, inst, urls(server)[:1], ["job_end"], "en")
        (s / "notify" / "sh" / "settings").write_text("2\n2\n3\n0\n¥\n")  # 2 s a try, 2 tries, 3 s in all
        path = tool_dir(tmp_path, curl=True)
        (path / "curl").unlink()
        (path / "curl").write_text("#!/bin/sh\nexec sleep 60\n")
        (path / "curl").chmod(0o755)
        started = time.time()
        res = await host.run(f"PATH={path} sh {s}/bin/notify-v1.sh {s} test", timeout=60)
        took = time.time() - started
        assert res.exit_status == 3 and took < 3 + 3, (res, took)
        (line,) = outbox(sshd_instance)
        assert [(t["ok"], t["error"], t["attempts"]) for t in line["targets"]] == [(False, "no time left", 1)]
        assert "stopped at the budget's end" in (s / "notify" / "sender.log").read_text()
    finally:
        await host.close()


async def test_a_nan_loss_while_the_job_runs_is_sent_once(sshd_instance, tmp_path: Path, server: NotifyServer) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, [f"json://127.0.0.1:{server.port}/h"], ["job_end", "job_failure"], "en")
        quick_watch(sshd_instance, grace=1)
        command = "echo 'step 10 loss=0.5'; echo 'step 20 loss=nan'; sleep 120"
        req = await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command=command, name="nan-run"))
        await until(lambda: server.seen, timeout=60, what="the job_failure notice")
        assert server.seen[0].json["title"] == "gpu: job nan-run: NaN loss (still running)"
        # the sender appends the outbox line once every target has answered, just after the server saw it
        await until(lambda: outbox(sshd_instance), timeout=30, what="the job_failure outbox line")
        assert outbox(sshd_instance)[0]["id"] == f"job_failure:{req.id}"
        await jobsvc.stop_job(host, inst, req.id)
        await until(lambda: len(outbox(sshd_instance)) == 2, timeout=60, what="the job_end notice")
        assert [s.json["title"] for s in server.seen] == [
            "gpu: job nan-run: NaN loss (still running)",
            "gpu: job nan-run stopped",
        ]
    finally:
        await host.close()


async def test_a_failure_moments_before_the_exit_is_one_job_end(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, [f"json://127.0.0.1:{server.port}/h"], ["job_end", "job_failure"], "en")
        quick_watch(sshd_instance, grace=30)
        command = "echo 'step 20 loss=nan'; sleep 3; exit 1"
        req = await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command=command))
        log = state(sshd_instance) / "notify" / "sender.log"
        await until(lambda: log.exists() and "held back" in log.read_text(), timeout=60, what="the watcher's decision")
        await until(lambda: outbox(sshd_instance), timeout=60, what="the job_end notice")
        assert len(server.seen) == 1 and server.seen[0].json["title"] == f"gpu: job {req.id} failed: NaN loss"
        assert [line["id"] for line in outbox(sshd_instance)] == [f"job_end:{req.id}"]
    finally:
        await host.close()


async def test_without_python3_or_openssl_a_signed_robot_is_refused_not_sent_unsigned(
    sshd_instance, tmp_path: Path, server: NotifyServer
) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await nr.install_notify(host, inst, urls(server)[3:5], ["job_end"], "en")  # DingTalk (signed), WeCom
        path = tool_dir(tmp_path, curl=True)
        (path / "openssl").unlink()
        s = state(sshd_instance)
        res = await host.run(f"PATH={path} sh {s}/bin/notify-v1.sh {s} test", timeout=60)
        results = [json.loads(line) for line in res.stdout.splitlines()]
        assert [(r["ok"], r["error"]) for r in results] == [(False, "signing needs python3 or openssl"), (True, None)]
        assert [x.service for x in server.seen] == ["wecombot"]
    finally:
        await host.close()


@pytest.mark.parametrize("via", ["python3", "curl"])
async def test_autodl_wechat_with_the_developer_token_from_the_keyring(
    sshd_instance, tmp_path: Path, server: NotifyServer, monkeypatch, via: str
) -> None:
    monkeypatch.setenv("GPU_TUI_AUTODL_WECHAT_API", server.base)
    store = SecretStore(environ={"GPU_TUI_PASSWORD_PROVIDER_AUTODL": "dev-token-0123456789"})
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        assert await nr.install_notify(host, inst, ["autodl-wechat"], ["job_end"], "en", store=store) == []
        s = state(sshd_instance)
        path = f"PATH={tool_dir(tmp_path, curl=True)} " if via == "curl" else ""
        res = await host.run(f"{path}sh {s}/bin/notify-v1.sh {s} test", timeout=60)
        assert [json.loads(line)["ok"] for line in res.stdout.splitlines()] == [True], res
        (seen,) = server.seen
        assert seen.service == "autodl-wechat" and seen.headers["authorization"] == "dev-token-0123456789"
        assert seen.json == {
            "title": "gpu: gpu-tui test message",
            "name": "gpu-tui",
            "content": "Sent by the instance itself: notifications work with the laptop closed.",
        }
        assert "dev-token" not in (s / "notify" / "outbox.jsonl").read_text()
        warnings = await nr.install_notify(
            host, inst, ["autodl-wechat"], ["job_end"], "en", store=SecretStore(environ={}, timeout=0.5)
        )
        assert len(warnings) == 1 and "no AutoDL developer token" in warnings[0]
    finally:
        await host.close()
