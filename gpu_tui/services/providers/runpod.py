"""RunPod's REST API (https://docs.runpod.io/api-reference): base `https://rest.runpod.io/v1`,
`Authorization: Bearer <key>`. `GET /pods` lists pods, `GET /pods/{id}` one,
`POST /pods/{id}/start` and `/stop` power it. A pod's SSH endpoint is `publicIp` and
`portMappings["22"]` (both null while it is stopped); `costPerHr` is USD per hour.

The balance is only in RunPod's GraphQL API (`myself { clientBalance currentSpendPerHr }`),
at `GPU_TUI_RUNPOD_GRAPHQL` (default `https://api.runpod.io/graphql`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr

from gpu_tui.core.errors import RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.providers import AccountBalance, ProviderInstance, normalise_status, port_of
from gpu_tui.services.providers.http import JsonApi

__all__ = ["RunPod", "parse_pod"]

GRAPHQL = "https://api.runpod.io/graphql"


def _float(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def parse_pod(pod: Mapping[str, Any]) -> ProviderInstance:
    try:
        pod_id = str(pod["id"])
    except (KeyError, TypeError):
        raise RemoteError(_("RunPod API: a pod without an id: {pod!r}").format(pod=str(pod)[:120])) from None
    raw = str(pod.get("desiredStatus") or "")
    gpu_raw, mappings_raw = pod.get("gpu"), pod.get("portMappings")
    gpu: Mapping[str, Any] = gpu_raw if isinstance(gpu_raw, Mapping) else {}
    count, model = gpu.get("count"), gpu.get("displayName") or gpu.get("id") or ""
    mappings: Mapping[str, Any] = mappings_raw if isinstance(mappings_raw, Mapping) else {}
    ip, port = pod.get("publicIp") or None, port_of(mappings.get("22"))
    running = normalise_status(raw) == "running"
    # RUNNING is what RunPod wants; until it has an address the pod is still coming up
    state = "starting" if running and not (ip and port) else normalise_status(raw)
    price = _float(pod.get("adjustedCostPerHr")) or _float(pod.get("costPerHr"))
    return ProviderInstance(
        provider="runpod",
        id=pod_id,
        name=str(pod.get("name") or ""),
        status=state,
        raw_status=raw,
        gpu=f"{count}x {model}" if count and model else str(model),
        price_per_hour=price,
        currency="$",
        ssh_host=str(ip) if ip and port and running else None,
        ssh_port=port if ip and port and running else None,
        ssh_user="root",
    )


class RunPod:
    provider = "runpod"

    def __init__(self, token: SecretStr, base: str, timeout: float) -> None:
        headers = {"Authorization": f"Bearer {token.get_secret_value()}"}
        self._api = JsonApi("RunPod", base, headers, timeout)
        self._graphql = JsonApi("RunPod", os.environ.get("GPU_TUI_RUNPOD_GRAPHQL", GRAPHQL), headers, timeout)

    async def list_instances(self) -> list[ProviderInstance]:
        reply = await self._api.request("GET", "/pods")
        if not isinstance(reply, list):
            raise RemoteError(_("RunPod API: /pods did not answer a list"))
        return [parse_pod(p) for p in reply if isinstance(p, Mapping)]

    async def get(self, instance_id: str) -> ProviderInstance:
        reply = await self._api.request("GET", f"/pods/{instance_id}")
        if not isinstance(reply, Mapping):
            raise RemoteError(_("RunPod API: no pod {id}").format(id=instance_id))
        return parse_pod(reply)

    async def start(self, instance_id: str) -> None:
        await self._api.request("POST", f"/pods/{instance_id}/start")

    async def stop(self, instance_id: str) -> None:
        await self._api.request("POST", f"/pods/{instance_id}/stop")

    async def balance(self) -> AccountBalance:
        reply = await self._graphql.request(
            "POST", "", body={"query": "query { myself { clientBalance currentSpendPerHr } }"}, idempotent=True
        )
        try:
            me = reply["data"]["myself"]
            return AccountBalance("runpod", float(me["clientBalance"]), "$", _float(me.get("currentSpendPerHr")))
        except (KeyError, TypeError, ValueError):
            errors = reply.get("errors") if isinstance(reply, Mapping) else None
            why = (
                errors[0].get("message")
                if isinstance(errors, list) and errors and isinstance(errors[0], Mapping)
                else str(reply)[:120]
            )
            raise RemoteError(_("RunPod API: no balance in the answer: {why}").format(why=why)) from None
