"""Loopback HTTP servers that answer as RunPod's, Vast.ai's and AutoDL's API documentation shows
(docs/PROVIDERS.md cites each page), so the provider clients and commands are tested against
real HTTP, never a mock.

    srv = ProviderServer("runpod", token="rp-key").start()
    srv.add("pod1", name="train", state="stopped", ssh=("127.0.0.1", 2222), on_start=sshd.start)
    env GPU_TUI_RUNPOD_API=srv.url (and GPU_TUI_RUNPOD_GRAPHQL=srv.graphql_url)

An instance's state changes over time as a real one's does: a start makes it `starting` (RunPod:
desiredStatus RUNNING without an IP yet; Vast: loading; AutoDL: starting) and calls `on_start`
(start the sshd it stands for); after `boot_polls` more reads of it, it is running with its
endpoint. A stop makes it `stopping`, calls `on_stop`, and after `stop_polls` reads it is
stopped. A wrong token gets 401 with the provider's own error text; `delay` makes every reply
slow; `seen` records (method, path) of every request and `auth_seen` the auth headers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from loophttp import LoopbackServer

__all__ = ["FakeInstance", "ProviderServer", "provider_env"]


@dataclass
class FakeInstance:
    id: str
    name: str = ""
    state: str = "running"  # running | starting | stopping | stopped
    gpu: str = "RTX 4090"
    gpus: int = 1
    price: float = 0.69
    ssh: tuple[str, int] | None = None
    on_start: Callable[[], object] | None = None
    on_stop: Callable[[], object] | None = None
    boot_polls: int = 2
    stop_polls: int = 1
    _reads: int = 0
    starts: int = 0
    stops: int = 0

    def read(self) -> None:
        """A read of this instance (list or get): time passes for a transition under way."""
        self._reads += 1
        if self.state == "starting" and self._reads > self.boot_polls:
            self.state = "running"
        elif self.state == "stopping" and self._reads > self.stop_polls:
            self.state = "stopped"

    def power(self, on: bool) -> None:
        self._reads = 0
        if on and self.state in ("stopped", "stopping"):
            self.starts += 1
            self.state = "starting"
            if self.on_start:
                self.on_start()
        elif not on and self.state in ("running", "starting"):
            self.stops += 1
            self.state = "stopping"
            if self.on_stop:
                self.on_stop()


@dataclass
class ProviderServer:
    provider: str  # runpod | vast | autodl
    token: str = "test-token"
    balance: float = 42.5
    spend_per_hour: float = 0.69
    delay: float = 0.0
    instances: dict[str, FakeInstance] = field(default_factory=dict)
    seen: list[tuple[str, str]] = field(default_factory=list)
    auth_seen: list[str | None] = field(default_factory=list)
    down: bool = False
    """Answer 503 to everything (the API is down)."""
    _srv: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, inst_id: str, **kw: Any) -> FakeInstance:
        inst = FakeInstance(inst_id, **kw)
        self.instances[inst_id] = inst
        return inst

    @property
    def url(self) -> str:
        assert self._srv is not None
        base = f"http://127.0.0.1:{self._srv.server_address[1]}"
        return base + {"runpod": "/v1", "vast": "/api/v0", "autodl": ""}[self.provider]

    @property
    def graphql_url(self) -> str:
        assert self._srv is not None
        return f"http://127.0.0.1:{self._srv.server_address[1]}/graphql"

    def calls(self, method: str | None = None, suffix: str = "") -> list[tuple[str, str]]:
        return [c for c in self.seen if (method is None or c[0] == method) and c[1].split("?")[0].endswith(suffix)]

    def start(self) -> ProviderServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null") if length else None
                server.seen.append((self.command, self.path))
                server.auth_seen.append(self.headers.get("Authorization"))
                if server.delay:
                    time.sleep(server.delay)
                if server.down:
                    return self._send(503, {"error": "service unavailable"})
                with server._lock:
                    status, reply = server._route(self.command, self.path, self.headers.get("Authorization"), body)
                self._send(status, reply)

            def _send(self, status: int, reply: Any) -> None:
                data = json.dumps(reply).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): what a slow API does to it

            do_GET = do_POST = do_PUT = _handle  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self._srv = LoopbackServer(("127.0.0.1", 0), Handler)
        self._srv.daemon_threads = True
        threading.Thread(target=self._srv.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._srv is not None:
            self._srv.shutdown()
            self._srv.server_close()

    # --- answers, per provider ---

    def _authorised(self, auth: str | None) -> bool:
        want = self.token if self.provider == "autodl" else f"Bearer {self.token}"
        return auth == want

    def _route(self, method: str, raw_path: str, auth: str | None, body: Any) -> tuple[int, Any]:
        parts = urlsplit(raw_path)
        path, query = parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}
        if not self._authorised(auth):
            return 401, {
                "runpod": {"error": "Unauthorized: invalid API key"},
                "vast": {"success": False, "error": "invalid_api_key", "msg": "Invalid API key"},
                "autodl": {"code": "AuthorizeFailed", "msg": "token 无效", "data": None},
            }[self.provider]
        return getattr(self, f"_{self.provider}")(method, path, query, body)

    def _read_all(self) -> list[FakeInstance]:
        for inst in self.instances.values():
            inst.read()
        return list(self.instances.values())

    def _get(self, inst_id: str) -> FakeInstance | None:
        inst = self.instances.get(inst_id)
        if inst is not None:
            inst.read()
        return inst

    def _runpod_pod(self, i: FakeInstance) -> dict[str, Any]:
        up = i.state == "running"
        return {
            "id": i.id,
            "name": i.name,
            "desiredStatus": "EXITED" if i.state == "stopped" else "RUNNING",
            "costPerHr": f"{i.price:.2f}",
            "adjustedCostPerHr": i.price,
            "gpu": {"count": i.gpus, "displayName": i.gpu},
            "publicIp": i.ssh[0] if up and i.ssh else None,
            "portMappings": {"22": i.ssh[1]} if up and i.ssh else None,
            "machineId": "m-1",
            "lastStartedAt": "2026-12-01T10:00:00.000Z",
            "image": "runpod/pytorch:2.1.0",
        }

    def _runpod(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        if path == "/graphql" and method == "POST":
            return 200, {"data": {"myself": {"clientBalance": self.balance, "currentSpendPerHr": self.spend_per_hour}}}
        if path == "/v1/pods" and method == "GET":
            return 200, [self._runpod_pod(i) for i in self._read_all()]
        bits = path.removeprefix("/v1/pods/").split("/")
        inst = self._get(bits[0])
        if inst is None:
            return 404, {"error": f"pod {bits[0]} not found"}
        if len(bits) == 2 and method == "POST" and bits[1] in ("start", "stop"):
            inst.power(bits[1] == "start")
        return 200, self._runpod_pod(inst)

    def _vast_item(self, i: FakeInstance) -> dict[str, Any]:
        word = {"running": "running", "starting": "loading", "stopping": "running", "stopped": "stopped"}[i.state]
        return {
            "id": int(i.id),
            "label": i.name or None,
            "actual_status": word,
            "intended_status": "stopped" if i.state in ("stopping", "stopped") else "running",
            "cur_state": word,
            "ssh_host": i.ssh[0] if i.ssh else None,
            "ssh_port": i.ssh[1] if i.ssh else None,
            "dph_total": i.price,
            "gpu_name": i.gpu,
            "num_gpus": i.gpus,
            "start_date": 1764583200.0,
        }

    def _vast(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        path = path.rstrip("/")
        if path == "/api/v0/users/current":
            return 200, {"id": 7, "email": "a@example.com", "balance": self.balance}
        if path == "/api/v0/instances" and method == "GET":
            items = [self._vast_item(i) for i in self._read_all()]
            return 200, {"instances_found": len(items), "instances": items}
        inst = self._get(path.removeprefix("/api/v0/instances/"))
        if inst is None:
            return 404, {"success": False, "error": "no_such_instance", "msg": "Instance not found"}
        if method == "PUT":
            state = (body or {}).get("state")
            if state not in ("running", "stopped"):
                return 400, {"success": False, "error": "invalid_args", "msg": f"bad state {state!r}"}
            inst.power(state == "running")
            return 200, {"success": True}
        return 200, {"instances": self._vast_item(inst)}

    def _autodl(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        ok = lambda data: (200, {"code": "Success", "msg": "", "data": data})  # noqa: E731
        pro = "/api/v1/dev/instance/pro/"
        if path == "/api/v1/dev/wallet/balance":
            return ok({"assets": int(self.balance * 1000), "accumulate": 0, "voucher_balance": 0})
        if path == pro + "list" and method == "POST":
            items = [
                {"uuid": i.id, "instance_name": i.name, "status": self._autodl_word(i), "region_name": "西北B区"}
                for i in self._read_all()
            ]
            return ok({"list": items, "page_index": 1, "page_size": 100, "max_page": 1})
        uuid = query.get("instance_uuid") or (body or {}).get("instance_uuid", "")
        inst = self._get(uuid)
        if inst is None:
            return 200, {"code": "InstanceNotFound", "msg": "实例不存在", "data": None}
        if path == pro + "status":
            return ok(self._autodl_word(inst))
        if path == pro + "snapshot":
            up = inst.state == "running" and inst.ssh
            return ok(
                {
                    "ssh_command": f"ssh -p {inst.ssh[1]} root@{inst.ssh[0]}" if up and inst.ssh else "",
                    "proxy_host": inst.ssh[0] if up and inst.ssh else "",
                    "ssh_port": inst.ssh[1] if up and inst.ssh else 0,
                    "root_password": "never-read-this",
                    "payg_price": int(inst.price * 1000),
                    "snapshot_gpu_alias_name": inst.gpu,
                    "gpu_num": inst.gpus,
                }
            )
        if path in (pro + "power_on", pro + "power_off") and method == "POST":
            inst.power(path.endswith("power_on"))
            return ok(None)
        return 404, {"code": "NotFound", "msg": path}

    @staticmethod
    def _autodl_word(i: FakeInstance) -> str:
        words = {"running": "running", "starting": "starting", "stopping": "shutting_down", "stopped": "shutdown"}
        return words[i.state]


def provider_env(server: ProviderServer) -> dict[str, str]:
    """The environment that points gpu-tui at `server`, with its token."""
    env = {
        f"GPU_TUI_{server.provider.upper()}_API": server.url,
        f"GPU_TUI_PASSWORD_PROVIDER_{server.provider.upper()}": server.token,
    }
    if server.provider == "runpod":
        env["GPU_TUI_RUNPOD_GRAPHQL"] = server.graphql_url
    return env
