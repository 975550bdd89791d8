"""Job logs that are not UTF-8 text with LF line ends, end to end on real sshd: a GBK log, a
GB18030 one with 91 KB `\\r` lines, a CRLF one (from real logs; see
tests/data/logs/bytes/SOURCES.md). `jobs --json`, `logs` and the services the log screen uses
must read them as the UTF-8 originals read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui, ssh_host
from waiting import until, until_sync

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobRequest, new_job_id
from gpu_tui.core.trainlog.read import lines_of
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.follow import LogFollower

pytestmark = pytest.mark.sshd

DATA = Path(__file__).parent.parent / "data" / "logs"
BYTES, REAL = DATA / "bytes", DATA / "real"
GBK = "yolov7-nccl-abort-zh.gbk.log"
GB18030 = "yolo26-da-stops-epoch1.gb18030.log"
CRLF = "paddleocr-v3-rec-sarloss.crlf.log"


def put(inst, name: str) -> str:
    """The data file in the instance's home; the job `cat`s it."""
    shutil.copyfile(BYTES / name, inst.home() / name)
    return f"~/{name}"


def original_lines(rel: str, n: int) -> list[str]:
    return lines_of((REAL / rel).read_bytes(), from_start=True)[-n:]


def cli(tmp: Path, inst, *args: str):
    return run_gpu_tui(tmp, [inst], *args)


def finished_job(tmp: Path, inst, command: str) -> dict:
    res = cli(tmp, inst, "run", inst.name, "--", command)
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    seen: list[dict | None] = [None]

    def done() -> dict | None:
        out = cli(tmp, inst, "jobs", inst.name, "--json")
        assert out.returncode == 0, out.stderr
        seen[0] = {j["id"]: j for j in json.loads(out.stdout)["jobs"]}.get(job_id)
        return seen[0] if seen[0] is not None and seen[0]["state"] != "running" else None

    return until_sync(done, 60, what=f"job {job_id} to end", step=0.3, detail=lambda: f"the job: {seen[0]}")


def test_a_gbk_log_gives_its_failure_and_its_chinese_lines(sshd_instance, tmp_path: Path) -> None:
    path = put(sshd_instance, GBK)
    job = finished_job(tmp_path, sshd_instance, f"cat {path}; exit 134")  # the C++ abort
    assert (job["state"], job["exit_code"]) == ("failed", 134)
    assert job["failure"] == "NCCL error: unhandled cuda error"  # what a person reads off it
    logs = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, job["id"], "-n", "3")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.splitlines() == original_lines("nccl/yolov7-nccl-abort-zh.log", 3)
    assert logs.stdout.splitlines()[-1] == "已放弃 (核心已转储)"


def test_a_gb18030_log_with_91_kb_redrawn_lines_gives_the_run_progress(sshd_instance, tmp_path: Path) -> None:
    path = put(sshd_instance, GB18030)
    job = finished_job(tmp_path, sshd_instance, f"cat {path}")
    assert job["state"] == "succeeded" and job["failure"] is None and job["last_loss"] is None  # components only
    progress = job["progress"]
    assert (progress["epoch"], progress["epochs"]) == (1, 100)
    assert progress["percent"] == pytest.approx(0.09)  # 609/6848 of epoch 1 of 100
    logs = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, job["id"], "-n", "40")
    assert logs.stdout.splitlines() == original_lines("ultralytics/yolo26-da-stops-epoch1.log", 40)
    assert any(
        "域对抗训练" in line
        for line in lines_of((REAL / "ultralytics/yolo26-da-stops-epoch1.log").read_bytes(), from_start=True)
    )


def test_a_crlf_log_gives_its_last_loss_and_progress(sshd_instance, tmp_path: Path) -> None:
    path = put(sshd_instance, CRLF)
    job = finished_job(tmp_path, sshd_instance, f"cat {path}")
    assert job["last_loss"] == pytest.approx(1.606826)
    progress = job["progress"]
    assert (progress["epoch"], progress["epochs"], progress["step"]) == (4, 100, 110)
    logs = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, job["id"], "-n", "5")
    assert "\r" not in logs.stdout
    assert logs.stdout.splitlines() == original_lines("paddle/paddleocr-v3-rec-sarloss.log", 5)


async def test_the_log_window_and_its_follow_read_gbk(sshd_instance, tmp_path: Path) -> None:
    """What the log screen does: the window's bytes set the encoding, the follow goes on in it,
    and a GBK character split across the window's end and the follow is read whole."""
    put(sshd_instance, GBK)
    head = (BYTES / GBK).read_bytes()
    split = head.index("弃".encode("gbk")) + 1  # inside 弃
    (sshd_instance.home() / "part1").write_bytes(head[:split])
    (sshd_instance.home() / "part2").write_bytes(head[split:] + "\r\n第 2 轮 loss: 0.5\r\n".encode("gbk"))
    inst = InstanceConfig(name=sshd_instance.name, host=sshd_instance.host, port=sshd_instance.port)
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    try:
        req = await jobsvc.start_job(
            host,
            inst,
            JobRequest(id=new_job_id(), command="cat ~/part1; while [ ! -f ~/go ]; do sleep 0.05; done; cat ~/part2"),
        )
        facts = await until(lambda: _facts(host, inst, req.id), 30, what="the job's first bytes")
        assert facts.charset  # `locale charmap` where it started
        window = await jobsvc.read_log_bytes(host, inst, req.id)
        assert window.data == head[:split] and window.whole
        follower = LogFollower(host, inst, req.id, charset=facts.charset, poll_seconds=0.2)
        first = await follower.window()
        # the window is GBK: its lines read so, and the follow goes on in it
        assert list(first.lines) == lines_of(window.data, from_start=True, charset=facts.charset)[:-1]
        assert first.live == ("已放",)  # the row the window ends in, its half character held back
        (sshd_instance.home() / "go").touch()
        got = [line async for update in follower.updates(until_finished=True) for line in update.lines]
        assert got[-2:] == ["已放弃 (核心已转储)", "第 2 轮 loss: 0.5"]
        # the window's lines and the follow's are the log's, none lost, none twice
        whole_log = head + "\r\n第 2 轮 loss: 0.5\r\n".encode("gbk")
        assert list(first.lines) + got == lines_of(whole_log, from_start=True, charset=facts.charset)
        size, text, whole = await jobsvc.read_log_window(host, inst, req.id, charset=facts.charset)
        assert whole and text.endswith("已放弃 (核心已转储)\r\n第 2 轮 loss: 0.5\r\n")
    finally:
        await host.close()


async def _facts(host, inst, job_id: str):
    for f in await jobsvc.list_facts(host, inst):
        if f.id == job_id and f.log_bytes:
            return f
    return None
