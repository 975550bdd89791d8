"""The AutoDL balance client against a local HTTP server that answers as AutoDL's documentation
shows (https://www.autodl.com/docs/common_api/); nothing ever calls out."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import SecretStr

from gpu_tui.core.errors import AuthFailed, RemoteError, Unreachable
from gpu_tui.services.providers.autodl_balance import Balance, fetch_balance, hours_left

TOKEN = "dev-token-123"


class FakeAutoDL(BaseHTTPRequestHandler):
    reply: dict | bytes = {
        "code": "Success",
        "data": {"assets": 123450, "accumulate": 990000, "voucher_balance": 10000},
        "msg": "",
    }
    seen: list[tuple[str, str, str | None]] = []

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append(("POST", self.path, self.headers.get("Authorization")))
        if self.path != "/api/v1/dev/wallet/balance":
            self.send_error(404)
            return
        if self.headers.get("Authorization") != TOKEN:
            self.send_response(401)
            self.end_headers()
            return
        body = self.reply if isinstance(self.reply, bytes) else json.dumps(self.reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    FakeAutoDL.seen = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeAutoDL)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


async def test_balance_as_documented(server: str) -> None:
    b = await fetch_balance(SecretStr(TOKEN), base=server)
    assert b == Balance(assets=123.45, voucher=10.0, spent=990.0)
    assert FakeAutoDL.seen == [("POST", "/api/v1/dev/wallet/balance", TOKEN)]  # the token is the whole header
    assert hours_left(b, 3.96) == pytest.approx(133.45 / 3.96)
    assert hours_left(b, 0) is None


async def test_errors_are_one_clear_line(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AuthFailed, match="developer token"):
        await fetch_balance(SecretStr("wrong"), base=server)
    monkeypatch.setattr(FakeAutoDL, "reply", {"code": "AuthorizeFailed", "msg": "token 已失效", "data": None})
    with pytest.raises(RemoteError, match="token 已失效"):
        await fetch_balance(SecretStr(TOKEN), base=server)
    monkeypatch.setattr(FakeAutoDL, "reply", b"<html>maintenance</html>")
    with pytest.raises(RemoteError, match="cannot read"):
        await fetch_balance(SecretStr(TOKEN), base=server)
    with pytest.raises(Unreachable):
        await fetch_balance(SecretStr(TOKEN), base="http://127.0.0.1:9", timeout=2)


@pytest.mark.sshd
async def test_the_fleet_bar_shows_the_balance(
    server: str, sshd_instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sshhelp import config_text

    from gpu_tui.config.paths import Paths
    from gpu_tui.config.secrets import SecretStore
    from gpu_tui.config.settings import parse_settings
    from gpu_tui.ui.factory import build_app, config_source

    monkeypatch.setenv("GPU_TUI_AUTODL_API", server)
    text = config_text([sshd_instance]) + 'provider = "autodl"\n'
    settings = parse_settings(text)
    paths = Paths(tmp_path / "config.toml", tmp_path / "data", tmp_path / "log", tmp_path / "x", tmp_path / "y")
    paths.data_dir.mkdir(parents=True)
    store = SecretStore(environ={"GPU_TUI_PASSWORD_PROVIDER_AUTODL": TOKEN})
    app = build_app(config_source(settings, paths, store), settings)
    async with app.run_test(size=(100, 24)) as pilot:
        for _ in range(100):
            if app.dashboard.fleet_bar.note is not None:
                break
            await pilot.pause(0.1)
        assert app.dashboard.fleet_bar.note.plain.startswith("AutoDL ¥133.45")


async def test_a_redirect_is_refused_and_the_token_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib turns a POST that meets a 302 into a GET with the same Authorization header: followed,
    the redirect hands the developer token (the balance's, the WeChat push's) to the other host."""
    from loophttp import LoopbackServer

    from gpu_tui.services.notify.send import AUTODL_WECHAT, Target, send_all

    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            if self.path.startswith("/steal"):
                seen.append(self.headers.get("Authorization"))
                self.send_response(200)
            else:
                self.send_response(302)
                self.send_header("Location", f"http://localhost:{self.server.server_address[1]}/steal")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

    srv = LoopbackServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        with pytest.raises(RemoteError, match="HTTP 302"):
            await fetch_balance(SecretStr(TOKEN), base=base)
        monkeypatch.setenv("GPU_TUI_AUTODL_WECHAT_API", base)
        [sent] = await send_all(
            [Target(1, SecretStr(AUTODL_WECHAT), ("idle",), "config")], "t", "b", wechat_token=SecretStr(TOKEN)
        )
    finally:
        srv.shutdown()
        srv.server_close()
    assert not sent.ok and sent.error == "HTTP 302"
    assert seen == []  # the other host never saw the token
