"""AutoDL's developer API for Pro container instances (autodl.com docs, "instance_pro_api"):
base `https://api.autodl.com`, the developer token as the whole `Authorization` header, every
reply `{"code": "Success", "msg": "", "data": ...}`.

`POST /api/v1/dev/instance/pro/list` `{page_index, page_size}` -> `data.list[]`;
`GET .../pro/status?instance_uuid=` -> `data` the state; `GET .../pro/snapshot?instance_uuid=`
-> `ssh_command` (or `proxy_host` + `ssh_port`), `payg_price` (1/1000 yuan per hour), the GPU;
`POST .../pro/power_on` `{instance_uuid, payload: "gpu"}`, `POST .../pro/power_off` `{instance_uuid}`.
Ordinary (non-Pro) AutoDL instances have no power API: the API answers as if they did not exist.
The snapshot's `root_password` is never read into gpu-tui.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr

from gpu_tui.core.errors import AuthFailed, GpuTuiError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.logincmd import parse_login
from gpu_tui.core.providers import AccountBalance, ProviderInstance, normalise_status, port_of
from gpu_tui.services.providers.autodl_balance import fetch_balance
from gpu_tui.services.providers.http import JsonApi

__all__ = ["AutoDLPro", "parse_pro"]

_PRO = "/api/v1/dev/instance/pro"


def _data(reply: Any) -> Any:
    if not isinstance(reply, Mapping):
        raise RemoteError(_("AutoDL API: an answer gpu-tui cannot read: {body!r}").format(body=str(reply)[:120]))
    code = reply.get("code")
    if code != "Success":
        why = reply.get("msg") or code or _("refused")
        if isinstance(code, str) and "auth" in code.lower():
            raise AuthFailed(_("AutoDL API refused the developer token ({why})").format(why=why))
        raise RemoteError(_("AutoDL API: {why}").format(why=why))
    return reply.get("data")


def _endpoint(snap: Mapping[str, Any]) -> tuple[str | None, int | None, str]:
    command = snap.get("ssh_command")
    if isinstance(command, str) and command.strip():
        try:
            spec = parse_login(command)
            return spec.host, spec.port, spec.user
        except GpuTuiError:
            pass  # fall back to the separate fields below
    host, port = snap.get("proxy_host") or None, port_of(snap.get("ssh_port"))
    return (str(host), port, "root") if host and port else (None, None, "root")


def parse_pro(item: Mapping[str, Any], status: str | None, snap: Mapping[str, Any]) -> ProviderInstance:
    uuid = str(item.get("uuid") or item.get("instance_uuid") or "")
    if not uuid:
        raise RemoteError(_("AutoDL API: an instance without a uuid: {item!r}").format(item=str(item)[:120]))
    raw = str(status or item.get("status") or "")
    state = normalise_status(raw)
    host, port, user = _endpoint(snap) if state == "running" else (None, None, "root")
    price = snap.get("payg_price", item.get("payg_price"))
    gpu = snap.get("snapshot_gpu_alias_name") or item.get("snapshot_gpu_alias_name") or item.get("gpu_name") or ""
    count = snap.get("gpu_num") or item.get("gpu_num")
    return ProviderInstance(
        provider="autodl",
        id=uuid,
        name=str(item.get("instance_name") or item.get("name") or ""),
        status=state,
        raw_status=raw,
        gpu=f"{count}x {gpu}" if count and gpu else str(gpu),
        price_per_hour=int(price) / 1000 if isinstance(price, int | float) else None,
        currency="¥",
        ssh_host=host,
        ssh_port=port,
        ssh_user=user,
    )


class AutoDLPro:
    provider = "autodl"

    def __init__(self, token: SecretStr, base: str, timeout: float) -> None:
        self._token, self._base, self._timeout = token, base, timeout
        self._api = JsonApi("AutoDL", base, {"Authorization": token.get_secret_value()}, timeout)

    async def _snapshot(self, uuid: str) -> Mapping[str, Any]:
        snap = _data(await self._api.request("GET", f"{_PRO}/snapshot", query={"instance_uuid": uuid}))
        return snap if isinstance(snap, Mapping) else {}

    async def _status(self, uuid: str) -> str:
        data = _data(await self._api.request("GET", f"{_PRO}/status", query={"instance_uuid": uuid}))
        return str(data.get("status") if isinstance(data, Mapping) else data or "")

    async def list_instances(self) -> list[ProviderInstance]:
        found: list[ProviderInstance] = []
        page = 1
        while True:
            data = _data(
                await self._api.request(
                    "POST", f"{_PRO}/list", body={"page_index": page, "page_size": 100}, idempotent=True
                )
            )
            items = data.get("list") if isinstance(data, Mapping) else None
            if not isinstance(items, list):
                raise RemoteError(_("AutoDL API: the instance list is missing from the answer"))
            for item in items:
                if isinstance(item, Mapping):
                    uuid = str(item.get("uuid") or item.get("instance_uuid") or "")
                    found.append(parse_pro(item, None, await self._snapshot(uuid) if uuid else {}))
            pages = data.get("max_page")
            if page >= (pages if isinstance(pages, int) and not isinstance(pages, bool) else 1):
                return found
            page += 1

    async def get(self, instance_id: str) -> ProviderInstance:
        status = await self._status(instance_id)
        return parse_pro({"uuid": instance_id}, status, await self._snapshot(instance_id))

    async def start(self, instance_id: str) -> None:
        body = {"instance_uuid": instance_id, "payload": "gpu"}
        _data(await self._api.request("POST", f"{_PRO}/power_on", body=body))

    async def stop(self, instance_id: str) -> None:
        _data(await self._api.request("POST", f"{_PRO}/power_off", body={"instance_uuid": instance_id}))

    async def balance(self) -> AccountBalance:
        b = await fetch_balance(self._token, base=self._base, timeout=self._timeout)
        return AccountBalance("autodl", b.usable, "¥")
