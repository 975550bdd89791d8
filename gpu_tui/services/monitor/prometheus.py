"""A lab's fleet read from the Prometheus it already runs (issue 26; core/metrics/dcgm says what
is asked and how the answers read): one refresh is one instant query per metric for every node,
sent at once (never one per node), through the one HTTP client (services/providers/http).

A bearer token or basic-auth password travels in the `Authorization` header only. Every way a
refresh can fail is one line: Prometheus unreachable, a 401/403, a query it refuses (its own
words), an answer that is not a vector.
"""

from __future__ import annotations

import asyncio
import base64
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urlencode

from gpu_tui.config.secrets import SecretStore, env_var_name
from gpu_tui.config.settings import PrometheusConfig
from gpu_tui.core.errors import AuthFailed, InputError, RemoteError, Unreachable
from gpu_tui.core.i18n import _
from gpu_tui.core.metrics.dcgm import NodeReading, PromAnswerError, fleet, queries, vector
from gpu_tui.core.metrics.dcgm_range import Matrix, NodeHistory, history_from, history_queries, matrix
from gpu_tui.services.providers.http import Answer, NoAnswer, NotAUrl, fetch

T = TypeVar("T")

__all__ = ["PromRefresh", "PromSource", "lab_source", "read_fleet", "read_history", "secret_key"]


@dataclass(frozen=True, slots=True)
class PromSource:
    """Where a lab's Prometheus is, and which of its series are this fleet's."""

    name: str
    url: str
    match: str = ""
    """A label selector every query carries, `{cluster="a"}`."""
    token: str | None = field(default=None, repr=False)
    """A bearer token (from the keyring, never the config file)."""
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    """Basic auth (the password from the keyring)."""
    timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class PromRefresh:
    nodes: dict[str, NodeReading]
    queries: int
    """Requests sent for this refresh."""
    bytes: int
    """Answer bytes received."""


def secret_key(name: str) -> str:
    """The keyring username of a Prometheus's token or password (CONTRACTS: secrets)."""
    return f"prometheus:{name}"


def lab_source(name: str, cfg: PrometheusConfig, secrets: SecretStore, *, timeout: float = 10.0) -> PromSource:
    """`[prometheus.NAME]` with its secret; InputError (how to store it) where auth wants one and
    none is stored."""
    secret = None
    if cfg.auth != "none":
        found = secrets.get_password(secret_key(name))
        if found is None:
            raise InputError(
                _(
                    "Prometheus {name}: auth = {auth!r} but no {what} is stored: store it with "
                    "`keyring set gpu-tui {key}`, or set {variable}"
                ).format(
                    name=name,
                    auth=cfg.auth,
                    what=_("token") if cfg.auth == "bearer" else _("password"),
                    key=secret_key(name),
                    variable=env_var_name(secret_key(name)),
                )
            )
        secret = found.get_secret_value()
    return PromSource(
        name,
        cfg.url,
        cfg.match,
        token=secret if cfg.auth == "bearer" else None,
        user=cfg.user if cfg.auth == "basic" else None,
        password=secret if cfg.auth == "basic" else None,
        timeout=timeout,
    )


def _headers(source: PromSource) -> dict[str, str]:
    if source.token:
        return {"Authorization": f"Bearer {source.token}"}
    if source.user is not None:
        pair = f"{source.user}:{source.password or ''}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
    return {}


async def _query(source: PromSource, expr: str) -> tuple[list[tuple[dict[str, str], float | None]], int]:
    answer = await _ask(source, "query", {"query": expr})
    return _read(source, answer, vector), len(answer.body)


async def _query_range(source: PromSource, expr: str, start: float, end: float, step: float) -> tuple[Matrix, int]:
    params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
    answer = await _ask(source, "query_range", params)
    return _read(source, answer, matrix), len(answer.body)


async def _ask(source: PromSource, endpoint: str, params: dict[str, str]) -> Answer:
    url = source.url.rstrip("/") + f"/api/v1/{endpoint}?" + urlencode(params)
    try:
        answer = await fetch("GET", url, headers=_headers(source), timeout=source.timeout)
    except NoAnswer as exc:
        raise Unreachable(_("Prometheus {name}: {reason}").format(name=source.name, reason=exc.reason)) from None
    except NotAUrl as exc:
        raise RemoteError(
            _("Prometheus {name}: {url} is not a URL ({reason})").format(name=source.name, url=source.url, reason=exc)
        ) from None
    if answer.status in (401, 403):
        raise AuthFailed(
            _("Prometheus {name} refused the credentials (HTTP {status}): check its token or password").format(
                name=source.name, status=answer.status
            )
        )
    return answer


def _read(source: PromSource, answer: Answer, parse: Callable[[bytes], T]) -> T:
    try:
        # 400 and 422 carry Prometheus's own words about a query it refused
        return parse(answer.body)
    except PromAnswerError as exc:
        raise RemoteError(
            _("Prometheus {name} (HTTP {status}): {reason}").format(name=source.name, status=answer.status, reason=exc)
        ) from None


async def read_fleet(source: PromSource) -> PromRefresh:
    """One refresh: every node's GPUs, exporter state and Xids, as Prometheus holds them now."""
    asked = queries(source.match)
    answers = await asyncio.gather(*(_query(source, expr) for expr in asked.values()))
    by_key = {key: rows for key, (rows, _size) in zip(asked, answers, strict=True)}
    return PromRefresh(fleet(by_key), len(asked), sum(size for _rows, size in answers))


async def read_history(source: PromSource, node: str, *, end: float, seconds: float, points: int) -> NodeHistory:
    """`node`'s GPUs over the `seconds` before `end`, at about `points` steps (whole seconds):
    two range queries, sent at once."""
    step = float(max(1, math.ceil(seconds / max(1, points - 1))))
    start = end - step * (max(2, points) - 1)
    asked = history_queries(node, source.match)
    answers = await asyncio.gather(*(_query_range(source, expr, start, end, step) for expr in asked.values()))
    return history_from({key: rows for key, (rows, _size) in zip(asked, answers, strict=True)}, start, end, step)
