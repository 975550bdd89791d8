"""The instance-side sender's pure parts: Apprise URLs -> request templates, masking, and the
shipped copy of gpu-tui's log rules (it must say what `gpu-tui jobs` says, on old pythons too)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from oldpythons import require_old_python

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.notify import urls as nu
from gpu_tui.core.trainlog.read import summarize
from gpu_tui.core.units import format_duration_s, format_money
from gpu_tui.services.notify import bundle as notify_bundle
from gpu_tui.services.notify import instance as notify_remote

SECRET_URLS = {
    "dingtalk://SECabcdef0123456789@tok0123456789abc/": ("SECabcdef0123456789", "tok0123456789abc"),
    "feishu://hook0123456789abc?secret=sec0123456789": ("hook0123456789abc", "sec0123456789"),
    "lark://hook0123456789abc": ("hook0123456789abc",),
    "wecombot://key0123456789abc": ("key0123456789abc",),
    "schan://SCT0123456789abc": ("SCT0123456789abc",),
    "pushplus://pp0123456789abc": ("pp0123456789abc",),
    "tgram://123456789:AAHdef0123456789/55555": ("123456789:AAHdef0123456789", "55555"),
    "ntfy://mysecrettopic0123": ("mysecrettopic0123",),
    "ntfys://tk_0123456789abc@ntfy.example.org/alerts0123": ("tk_0123456789abc", "alerts0123"),
    "json://user:hunter2pass@hooks.example.org/abcdef0123456789abcdef": ("hunter2pass", "abcdef0123456789abcdef"),
}


@pytest.mark.parametrize("url", sorted(SECRET_URLS))
def test_mask_hides_every_secret(url: str) -> None:
    masked = nu.mask(url)
    assert masked.startswith(nu.scheme_of(url) + "://")
    for secret in SECRET_URLS[url]:
        assert secret not in masked


def test_request_templates_follow_each_services_documentation() -> None:
    r = nu.request_for("dingtalk://SECabc@tok123/")
    assert r.url == "https://oapi.dingtalk.com/robot/send?access_token=tok123&timestamp=@TS@&sign=@SIGN@"
    assert (r.sign, r.secret, r.ok_field, r.ok_values, r.timestamp_ms) == ("dingtalk", "SECabc", "errcode", (0,), True)
    assert r.body == {"msgtype": "text", "text": {"content": "@TEXT@"}}
    assert nu.request_for("dingtalk://tok123/").sign is None
    f = nu.request_for("feishu://hook1?secret=s3")
    assert f.url == "https://open.feishu.cn/open-apis/bot/v2/hook/hook1" and f.sign == "feishu"
    assert f.body == {"timestamp": "@TS@", "sign": "@SIGN@", "msg_type": "text", "content": {"text": "@TEXT@"}}
    assert nu.request_for("lark://hook1").url == "https://open.larksuite.com/open-apis/bot/v2/hook/hook1"
    assert nu.request_for("wecombot://k1").url == "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k1"
    assert nu.request_for("schan://SCT1").url == "https://sctapi.ftqq.com/SCT1.send"
    p = nu.request_for("pushplus://t1")
    assert p.url == "https://www.pushplus.plus/send" and p.ok_values == (200,)
    t = nu.request_for("tgram://123:ABC/42")
    assert t.url == "https://api.telegram.org/bot123:ABC/sendMessage" and t.body == {"chat_id": "42", "text": "@TEXT@"}
    n = nu.request_for("ntfy://alerts")
    assert n.url == "https://ntfy.sh/" and n.body == {"topic": "alerts", "title": "@TITLE@", "message": "@BODY@"}
    n = nu.request_for("ntfys://tk_abc@ntfy.example.org/a?tags=warning,gpu")
    assert n.url == "https://ntfy.example.org/" and ("Authorization", "Bearer tk_abc") in n.headers
    assert isinstance(n.body, dict) and n.body["tags"] == ["warning", "gpu"]
    j = nu.request_for("jsons://u:p@h.example.org:8443/x?+X-Key=v&a=b")
    assert j.url == "https://h.example.org:8443/x?a=b" and ("X-Key", "v") in j.headers
    assert ("Authorization", "Basic dTpw") in j.headers
    a = nu.request_for("autodl-wechat", autodl_token="dev-tok", autodl_base="http://127.0.0.1:9")
    assert a.url == "http://127.0.0.1:9/api/v1/wechat/message/send" and ("Authorization", "dev-tok") in a.headers
    assert a.body == {"title": "@TITLE@", "name": "gpu-tui", "content": "@BODY@"}
    assert nu.request_for("schan://K", base="http://127.0.0.1:8/").url == "http://127.0.0.1:8/K.send"


def test_laptop_only_and_broken_urls_say_why() -> None:
    assert nu.support_reason("slack://a/b/c") == "slack: sent from the laptop only"
    assert nu.support_reason("mailto://u:p@example.org") == "mailto: sent from the laptop only"
    assert nu.support_reason("tgram://123:ABC/") == "tgram://1****/: the chat id is missing"
    assert nu.support_reason("autodl-wechat") is None
    with pytest.raises(nu.Unsupported, match="no AutoDL developer token"):
        nu.request_for("autodl-wechat")
    inst = InstanceConfig(name="box", host="h")
    doc, sh, warnings = notify_remote.targets_document(
        inst, ["slack://a/b/c", "wecombot://k1"], ["job_end", "low_util"]
    )
    assert warnings == ["slack://****/****/****: not sent from the instance (slack: sent from the laptop only)"]
    assert doc["events"] == ["job_end"] and isinstance(doc["targets"], list) and len(doc["targets"]) == 1
    assert sh["t0.body"] == 'L{"msgtype": "text", "text": {"content": \nM @TEXT@\nL}}\n'
    assert sh["t0.meta"] == 'wecombot://****\n\n"errcode" *: *(0)([,} ]|$)\n'


def load_sender() -> ModuleType:
    path = Path(notify_bundle.__file__).with_name("sender.py")
    spec = importlib.util.spec_from_file_location("shipped_sender", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_senders_numbers_read_like_gpu_tuis() -> None:
    sender = load_sender()
    for s in (None, -5, 0, 45, 59.9, 60, 725, 3600, 18420, 86399, 86400, 183000, 10**7):
        assert sender.duration(s) == format_duration_s(s)
    for amount in (None, 0, 2.97, 1234.5, 0.004):
        assert sender.money(amount, "¥") == format_money(amount, "¥")


LOGS = [
    ("epoch 1 loss=0.5\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n", 1),
    ("step 3\nKilled\n", 137),
    ("starting\n", 137),
    ("starting\n", 2),
    ("fine\n", 0),
    ("[rank0]: torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error, NCCL\n", 1),
    ("OSError: [Errno 28] No space left on device: '/root/ckpt'\n", 1),
]


def shipped_rules_verdict(tmp_path: Path, python: str, log: str, code: int) -> dict:
    """failure_of() of the shipped sender and rules for a job's `log` and exit `code`, run by `python`."""
    core = tmp_path / "bin" / "notify-v1-core"
    core.mkdir(parents=True, exist_ok=True)
    (tmp_path / "notify").mkdir(exist_ok=True)
    for name, text in notify_bundle.portable_core().items():
        (core / name).write_text(text)
    probe = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import importlib.util as u; "
        "s = u.spec_from_file_location('s', sys.argv[2]); m = u.module_from_spec(s); s.loader.exec_module(m); "
        "print(json.dumps(m.failure_of(sys.argv[3], sys.argv[4], True, int(sys.argv[5]))[0]))"
    )
    sender = str(Path(notify_bundle.__file__).with_name("sender.py"))
    out = subprocess.run(
        [python, "-c", probe, str(core), sender, str(tmp_path), log, str(code)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize(("log", "code"), LOGS)
def test_the_shipped_rules_name_the_failure_gpu_tui_jobs_names(tmp_path: Path, log: str, code: int) -> None:
    expected = summarize(log, from_start=True).finish(code)
    assert shipped_rules_verdict(tmp_path, sys.executable, log, code) == expected


def test_the_shipped_rules_name_the_same_failures_on_an_old_python3(tmp_path: Path) -> None:
    # a rented image's python3 may be 3.6: tests/oldpythons.py finds old ones, or this skips
    for python in require_old_python():
        for log, code in LOGS:
            expected = summarize(log, from_start=True).finish(code)
            assert shipped_rules_verdict(tmp_path, python, log, code) == expected, (python, log)


def test_messages_are_translated_on_the_laptop_into_the_users_language() -> None:
    inst = InstanceConfig(name="box", host="h")
    doc, sh, _w = notify_remote.targets_document(inst, ["wecombot://k1"], ["job_end"], language="zh-CN")
    assert isinstance(doc["messages"], dict) and doc["messages"]["job_end.failed"] == "box: 任务 {job} 失败: {reason}"
    assert sh["msg.job_end.failed"] == "box: 任务 {job} 失败: {reason}\n"
    doc, _sh, _w = notify_remote.targets_document(inst, ["wecombot://k1"], ["job_end"], language="en")
    assert isinstance(doc["messages"], dict) and doc["messages"]["job_end.failed"] == "box: job {job} failed: {reason}"


def test_install_says_what_an_instance_without_python3_cannot_do() -> None:
    inst = InstanceConfig(name="box", host="h")
    doc, _sh, _w = notify_remote.targets_document(inst, ["dingtalk://S3C@tok/", "wecombot://k1"], ["job_end"])
    probe = "python none\ncurl yes\ninstalled\n"
    assert notify_remote._tool_warnings(inst, probe, doc) == [
        "box: no python3 on the instance: a failed job's notice gives its exit code, not the log's reason",
        "dingtalk://****@****/: needs signing (HMAC-SHA256), and the instance has neither python3 nor openssl: "
        "sent from the laptop only",
    ]
    assert notify_remote._tool_warnings(inst, probe.replace("curl yes", "openssl yes"), doc) == [
        "box: no python3, curl or GNU wget on the instance: it cannot send notifications"
    ]
    assert notify_remote._tool_warnings(inst, "python 3.6\ninstalled\n", doc) == []


def test_mask_hides_every_query_value() -> None:
    """Apprise puts headers in the query (`+X-Api-Key=...`): any of them may be a token."""
    shown = nu.mask("json://127.0.0.1:8080/hook?+X-Api-Key=SUPERSECRET123&format=json")
    assert "SUPERSECRET123" not in shown and "+X-Api-Key=****" in shown


@pytest.mark.parametrize("url", ["json://127.0.0.1:99999/x", "json://host:abc/", "json://[::1/x"])
def test_a_url_urllib_refuses_is_unsupported_not_a_traceback(url: str) -> None:
    with pytest.raises(nu.Unsupported):
        nu.request_for(url)
    from gpu_tui.services.notify import instance as notify_remote

    doc, _sh, warnings = notify_remote.targets_document(InstanceConfig(name="box", host="h"), [url], ["job_end"])
    assert doc["targets"] == [] and len(warnings) == 1 and "not sent from the instance" in warnings[0]


def test_the_instance_sender_follows_no_redirect() -> None:
    """A 302 from the target must not carry its headers (an AutoDL token) to another host."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler

    from loophttp import LoopbackServer

    seen: list[str] = []

    class Other(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            seen.append(self.headers.get("Authorization", ""))
            self.send_response(200)
            self.end_headers()

        do_GET = do_POST  # urllib turns a POST into a GET on a 302

    other = LoopbackServer(("127.0.0.1", 0), Other)

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{other.server_address[1]}/steal")
            self.end_headers()

    first = LoopbackServer(("127.0.0.1", 0), Redirect)
    for srv in (first, other):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        target = {
            "masked": "json://…",
            "url": f"http://127.0.0.1:{first.server_address[1]}/hook",
            "body": {},
            "headers": [["Authorization", "TOKEN123"]],
            "ok_values": [],
        }
        result = load_sender().send_one(target, "t", "b", {"attempts": 1, "timeout": 3, "deadline": time.time() + 10})
        assert result["ok"] is False and seen == []
    finally:
        first.shutdown()
        other.shutdown()
