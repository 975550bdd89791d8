"""The laptop's sending (services/notify/send.py): Apprise really sending to loopback servers that
answer like ntfy's and a JSON webhook's documentation, AutoDL's WeChat API, a dead target that
costs no more than its timeout, and URLs masked wherever they are shown or logged."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from notifyserver import dead_port, notify_server
from pydantic import SecretStr

from gpu_tui.config.logsetup import setup_logging
from gpu_tui.services.notify.send import AUTODL_WECHAT, Target, masked, send_all, url_problem


def target(n: int, url: str) -> Target:
    return Target(n, SecretStr(url), ("idle",), "config")


async def test_apprise_sends_to_ntfy_and_a_json_webhook() -> None:
    with notify_server() as srv:
        ntfy, hook = (
            target(1, f"ntfy://127.0.0.1:{srv.port}/gpu-alerts"),
            target(2, f"json://127.0.0.1:{srv.port}/hook"),
        )
        results = await send_all([ntfy, hook], "box idle for 15m00s", "Every GPU idle; still billing ¥2.00/h.")
        assert [r.ok for r in results] == [True, True], results
        by_path = {r.path: r for r in srv.requests}
        assert set(by_path) == {"/", "/hook"}
        assert by_path["/"].json() == {
            "topic": "gpu-alerts",
            "title": "box idle for 15m00s",
            "message": "Every GPU idle; still billing ¥2.00/h.",
        }
        body = by_path["/hook"].json()
        assert isinstance(body, dict) and body["title"] == "box idle for 15m00s" and body["type"] == "info"
        assert body["message"] == "Every GPU idle; still billing ¥2.00/h." and body["version"] == "1.0"


async def test_ntfy_token_goes_in_the_header_and_never_in_what_is_shown(tmp_path: Path) -> None:
    token = "tk_abcdefghijklmnopqrstuvwxyz12"
    log_file = tmp_path / "gpu-tui.log"
    setup_logging(log_file, debug=True)
    try:
        with notify_server() as srv:
            srv.status = 403  # refused: the failure is logged, and the token must not be in it
            url = f"ntfy://{token}@127.0.0.1:{srv.port}/secret-topic-name"
            t = target(1, url)
            [result] = await send_all([t], "title", "body")
            assert not result.ok and result.error
            assert srv.requests[0].headers["authorization"] == f"Bearer {token}"
    finally:
        logging.getLogger().handlers.clear()
    assert token not in t.shown and "secret-topic-name" not in t.shown, t.shown
    assert t.shown.startswith("ntfy://") and f"127.0.0.1:{srv.port}" in t.shown
    assert token not in log_file.read_text() and "secret-topic-name" not in log_file.read_text()


async def test_a_dead_target_costs_its_timeout_and_not_the_others() -> None:
    with notify_server() as srv, dead_port() as port:
        t0 = time.monotonic()
        results = await send_all(
            [target(1, f"json://127.0.0.1:{port}/x"), target(2, f"json://127.0.0.1:{srv.port}/y")],
            "t",
            "b",
            timeout=1.0,
        )
        spent = time.monotonic() - t0
    assert [r.ok for r in results] == [False, True]
    assert results[0].error
    assert spent < 1.0 + 2 + 5  # the timeout, the thread's grace, a loaded machine


async def test_autodl_wechat_posts_the_documented_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    with notify_server() as srv:
        monkeypatch.setenv("GPU_TUI_AUTODL_WECHAT_API", srv.base)
        wechat = target(1, AUTODL_WECHAT)
        token = SecretStr(srv.wechat_token)
        [ok] = await send_all([wechat], "训练结束", "box: 成功", instance="box", wechat_token=token)
        [bad] = await send_all([wechat], "t", "b", wechat_token=SecretStr("wrong-token"))
        [none] = await send_all([wechat], "t", "b", wechat_token=None)
    assert ok.ok and not bad.ok and "AuthorizeFailed" in (bad.error or "")
    assert not none.ok and "provider:autodl" in (none.error or "")
    req = srv.requests[0]
    assert req.path == "/api/v1/wechat/message/send" and req.headers["authorization"] == srv.wechat_token
    assert req.json() == {"title": "训练结束", "name": "box", "content": "box: 成功"}
    assert len(srv.requests) == 2  # no token: nothing sent


def test_urls_are_checked_and_masked() -> None:
    assert url_problem("ntfy://127.0.0.1/topic") is None and url_problem(AUTODL_WECHAT) is None
    assert url_problem("foo://bar") and url_problem("hello") and url_problem("json://")
    assert masked("json://user:hunter2secret@127.0.0.1:8080/hook") == "json://user:****@127.0.0.1:8080/hook"
    shown = masked("tgram://123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/987654321")
    assert "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw" not in shown and "987654321" not in shown
    assert masked("lark://abcdefghijklmnop/secretsecret").count("secret") == 0
