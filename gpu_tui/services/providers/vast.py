"""Vast.ai's REST API (https://docs.vast.ai/api-reference): base `https://console.vast.ai/api/v0`,
`Authorization: Bearer <key>`. `GET /instances/` -> `{"instances": [...]}`, `GET /instances/{id}/`
-> `{"instances": {...}}`, `PUT /instances/{id}/` with `{"state": "running"}` or
`{"state": "stopped"}`, `GET /users/current/` -> `balance`. An instance's SSH endpoint is
`ssh_host`:`ssh_port` (Vast's proxy), `actual_status` its state, `dph_total` USD per hour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr

from gpu_tui.core.errors import RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.providers import AccountBalance, ProviderInstance, normalise_status, port_of
from gpu_tui.services.providers.http import JsonApi

__all__ = ["Vast", "parse_instance"]


def parse_instance(item: Mapping[str, Any]) -> ProviderInstance:
    try:
        inst_id = str(int(item["id"]))
    except (KeyError, TypeError, ValueError):
        raise RemoteError(_("Vast.ai API: an instance without an id: {item!r}").format(item=str(item)[:120])) from None
    raw = str(item.get("actual_status") or item.get("cur_state") or "")
    host, port = item.get("ssh_host") or None, item.get("ssh_port") or None
    count, model = item.get("num_gpus"), item.get("gpu_name") or ""
    price = item.get("dph_total")
    return ProviderInstance(
        provider="vast",
        id=inst_id,
        name=str(item.get("label") or ""),
        status=normalise_status(raw),
        raw_status=raw,
        gpu=f"{count}x {model}" if count and model else str(model),
        price_per_hour=float(price) if isinstance(price, int | float) else None,
        currency="$",
        ssh_host=str(host) if host and port_of(port) else None,
        ssh_port=port_of(port) if host else None,
        ssh_user="root",
    )


class Vast:
    provider = "vast"

    def __init__(self, token: SecretStr, base: str, timeout: float) -> None:
        self._api = JsonApi("Vast.ai", base, {"Authorization": f"Bearer {token.get_secret_value()}"}, timeout)

    async def list_instances(self) -> list[ProviderInstance]:
        reply = await self._api.request("GET", "/instances/", query={"owner": "me"})
        items = reply.get("instances") if isinstance(reply, Mapping) else None
        if not isinstance(items, list):
            raise RemoteError(_("Vast.ai API: /instances/ did not answer a list of instances"))
        return [parse_instance(i) for i in items if isinstance(i, Mapping)]

    async def get(self, instance_id: str) -> ProviderInstance:
        reply = await self._api.request("GET", f"/instances/{instance_id}/")
        item = reply.get("instances", reply.get("instance")) if isinstance(reply, Mapping) else None
        if not isinstance(item, Mapping):
            raise RemoteError(_("Vast.ai API: no instance {id}").format(id=instance_id))
        return parse_instance(item)

    async def _state(self, instance_id: str, state: str) -> None:
        reply = await self._api.request("PUT", f"/instances/{instance_id}/", body={"state": state})
        if isinstance(reply, Mapping) and reply.get("success") is False:
            why = reply.get("msg") or reply.get("error") or str(reply)[:120]
            raise RemoteError(_("Vast.ai API: {why}").format(why=why))

    async def start(self, instance_id: str) -> None:
        await self._state(instance_id, "running")

    async def stop(self, instance_id: str) -> None:
        await self._state(instance_id, "stopped")

    async def balance(self) -> AccountBalance:
        reply = await self._api.request("GET", "/users/current/")
        try:
            return AccountBalance("vast", float(reply["balance"]), "$")
        except (KeyError, TypeError, ValueError):
            raise RemoteError(_("Vast.ai API: no balance in the answer")) from None
