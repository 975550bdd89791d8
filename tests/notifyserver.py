"""Loopback HTTP servers that answer like notification services' documentation, recording what
they were sent (tests of the laptop's sending: Apprise and autodl-wechat).

- ntfy (https://docs.ntfy.sh/publish/): a POST to `/` with a JSON body naming the topic, or to
  `/TOPIC` with the message as the body; answers the message as JSON (`id`, `time`, `event`).
- a JSON webhook (Apprise's json://): any POST; answers 200 `{}`.
- AutoDL's WeChat message API: `POST /api/v1/wechat/message/send` with the token as the whole
  `Authorization` header; answers `{"code": "Success", "msg": ""}` (anything else for a bad token).
- `dead_port()`: a socket that accepts connections and never answers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from loophttp import LoopbackServer

__all__ = ["Recorded", "NotifyServer", "dead_port", "notify_server"]


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)


@dataclass
class NotifyServer:
    port: int
    requests: list[Recorded] = field(default_factory=list)
    wechat_token: str = "dev-token-123456"
    status: int = 200

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def notify_server() -> Iterator[NotifyServer]:
    state = NotifyServer(port=0)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            state.requests.append(Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if self.path.startswith("/api/v1/wechat/message/send"):
                ok = self.headers.get("Authorization") == state.wechat_token
                reply: object = {"code": "Success", "msg": ""} if ok else {"code": "AuthorizeFailed", "msg": "token"}
            elif b'"topic"' in body:  # ntfy's JSON publish: the message back, as ntfy answers
                topic = json.loads(body).get("topic")
                reply = {"id": "x1", "time": int(time.time()), "event": "message", "topic": topic}
            else:
                reply = {}
            data = json.dumps(reply).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = LoopbackServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def dead_port() -> Iterator[int]:
    """A port whose connections are accepted (by the kernel's backlog) and never answered."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()
