"""Loopback HTTP servers that answer like each notification service's documentation (issue 15).

One `NotifyServer` speaks every service the instance-side sender knows, told apart by path, as
the real endpoints are (core/notify/urls.ENDPOINTS with their scheme and host swapped for this
server's): Feishu/Lark custom bots, DingTalk robots, WeCom group bots, ServerChan Turbo,
PushPlus, Telegram's Bot API, AutoDL's WeChat message API, ntfy's JSON publishing, and plain
JSON webhooks (anything else). Each request is recorded (method, path, query, headers, body).

Replies are the documented ones: success, or (`fail=True`) that service's own error shape.
Signed robots are checked the way the services check them: a DingTalk or Feishu request whose
`sign` does not match the secret given here gets the service's signature error. `hold=True`
accepts a request and answers nothing until `release()` (a dead target; a slow one).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loophttp import LoopbackServer

__all__ = ["Seen", "NotifyServer", "feishu_sign", "dingtalk_sign"]


def feishu_sign(secret: str, ts: str) -> str:
    """Feishu: base64(HMAC-SHA256 keyed by "timestamp\\nsecret" over an empty message)."""
    return base64.b64encode(hmac.new(f"{ts}\n{secret}".encode(), b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(secret: str, ts: str) -> str:
    """DingTalk: base64(HMAC-SHA256(secret, "timestamp\\nsecret")) (urlencoded in the query)."""
    digest = hmac.new(secret.encode(), f"{ts}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    at: float
    service: str = ""
    verdict: str = "ok"

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class NotifyServer:
    secrets: dict[str, str] = field(default_factory=dict)
    """{"dingtalk" | "feishu": secret} the server checks signatures with."""
    fail: bool = False
    hold: bool = False
    seen: list[Seen] = field(default_factory=list)
    _release: threading.Event = field(default_factory=threading.Event)
    _srv: ThreadingHTTPServer | None = None

    @property
    def base(self) -> str:
        assert self._srv is not None
        return f"http://127.0.0.1:{self._srv.server_address[1]}"

    @property
    def port(self) -> int:
        assert self._srv is not None
        return int(self._srv.server_address[1])

    def release(self) -> None:
        self._release.set()

    def start(self) -> NotifyServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                split = urllib.parse.urlsplit(self.path)
                seen = Seen(
                    "POST",
                    split.path,
                    dict(urllib.parse.parse_qsl(split.query)),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    time.time(),
                )
                owner.seen.append(seen)
                if owner.hold:
                    owner._release.wait(120)
                status, reply = owner.answer(seen)
                data = json.dumps(reply, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._srv = LoopbackServer(("127.0.0.1", 0), Handler)
        self._srv.daemon_threads = True
        threading.Thread(target=self._srv.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._srv is not None:
            self._srv.shutdown()
            self._srv.server_close()

    # ------------------------------------------------------------------ the services

    def answer(self, s: Seen) -> tuple[int, Any]:
        p = s.path
        if p.startswith("/open-apis/bot/v2/hook/"):
            s.service = "feishu"
            return self._feishu(s)
        if p == "/robot/send":
            s.service = "dingtalk"
            return self._dingtalk(s)
        if p == "/cgi-bin/webhook/send":
            s.service = "wecombot"
            if self.fail:
                return 200, {"errcode": 93000, "errmsg": "invalid webhook url"}
            return 200, {"errcode": 0, "errmsg": "ok"}
        if p == "/api/v1/wechat/message/send":
            s.service = "autodl-wechat"
            if self.fail:
                return 200, {"code": "AuthorizeFailed", "msg": "token invalid", "data": None}
            return 200, {"code": "Success", "msg": "", "data": None}
        if p == "/send":
            s.service = "pushplus"
            if self.fail:
                return 200, {"code": 900, "msg": "用户账号使用受限", "data": None}
            return 200, {"code": 200, "msg": "请求成功", "data": "a1b2c3"}
        if p.endswith(".send"):
            s.service = "schan"
            if self.fail:
                return 200, {"code": 40001, "message": "bad pushtoken", "data": None}
            data = {"pushid": "1", "readkey": "r", "error": "SUCCESS", "errno": 0}
            return 200, {"code": 0, "message": "", "data": data}
        if p.startswith("/bot") and p.endswith("/sendMessage"):
            s.service = "tgram"
            if self.fail:
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: chat not found"}
            return 200, {"ok": True, "result": {"message_id": 7, "chat": {"id": 1}, "date": int(time.time())}}
        if p == "/" and b'"topic"' in s.body:
            s.service = "ntfy"
            if self.fail:
                return 403, {"code": 40301, "http": 403, "error": "forbidden"}
            msg = s.json
            return 200, {
                "id": "hwQ2YpKdmg",
                "time": int(time.time()),
                "event": "message",
                "topic": msg["topic"],
                "title": msg.get("title"),
                "message": msg.get("message"),
            }
        s.service = "json"
        if self.fail:
            return 500, {"error": "internal"}
        return 200, {}

    def _feishu(self, s: Seen) -> tuple[int, Any]:
        secret = self.secrets.get("feishu")
        if secret is not None:
            msg = s.json
            if msg.get("sign") != feishu_sign(secret, str(msg.get("timestamp"))):
                s.verdict = "bad sign"
                why = "sign match fail or timestamp is not within one hour from current time"
                return 200, {"code": 19021, "msg": why}
        if self.fail:
            return 200, {"code": 9499, "msg": "Bad Request", "data": {}}
        return 200, {"StatusCode": 0, "StatusMessage": "success", "code": 0, "data": {}, "msg": "success"}

    def _dingtalk(self, s: Seen) -> tuple[int, Any]:
        secret = self.secrets.get("dingtalk")
        if secret is not None:
            ts = s.query.get("timestamp", "")
            if s.query.get("sign") != dingtalk_sign(secret, ts) or abs(int(ts or 0) / 1000 - time.time()) > 3600:
                s.verdict = "bad sign"
                return 200, {"errcode": 310000, "errmsg": "sign not match"}
        if self.fail:
            return 200, {"errcode": 300001, "errmsg": "token is not exist"}
        return 200, {"errcode": 0, "errmsg": "ok"}
