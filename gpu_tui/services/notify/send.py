"""Sending a notification from the laptop: Apprise for the 100+ services it speaks, plus
AutoDL's WeChat message API (`autodl-wechat`, with the developer token of `provider:autodl`,
sent through the providers' one HTTP client).

Each target is sent with a deadline (an Apprise one in its own daemon thread, as Apprise blocks),
so a dead target never holds the dashboard, the other targets, or the CLI's exit. URLs are
secrets: only `masked(url)` is ever shown or logged, and every part of a URL that may be a token
is registered with the log's redaction filter before Apprise (which logs) sees it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import SecretStr

from gpu_tui.config.logsetup import redact
from gpu_tui.core.i18n import _
from gpu_tui.services.providers.http import NoAnswer, NotAUrl, fetch

__all__ = [
    "AUTODL_WECHAT",
    "Delivery",
    "Target",
    "masked",
    "send_all",
    "service_name",
    "url_problem",
    "wechat_endpoint",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

AUTODL_WECHAT = "autodl-wechat"
"""The special target: AutoDL's WeChat push, with the developer token kept as `provider:autodl`."""
DEFAULT_TIMEOUT = 10.0
"""Seconds one target may take (connect + answer) before it counts as not answering."""
WECHAT_BASE = "https://www.autodl.com"


def wechat_endpoint() -> str:
    """AutoDL's WeChat message API; `GPU_TUI_AUTODL_WECHAT_API` overrides the base (a proxy, a test)."""
    return os.environ.get("GPU_TUI_AUTODL_WECHAT_API", WECHAT_BASE).rstrip("/") + "/api/v1/wechat/message/send"


@dataclass(frozen=True, slots=True)
class Target:
    """One place notifications go, numbered as `notify list` shows it."""

    number: int
    url: SecretStr
    events: tuple[str, ...]
    source: Literal["config", "keyring"]

    @property
    def shown(self) -> str:
        return masked(self.url.get_secret_value())

    @property
    def service(self) -> str:
        return service_name(self.url.get_secret_value())


@dataclass(frozen=True, slots=True)
class Delivery:
    """How sending to one target went."""

    target: Target
    ok: bool
    error: str | None
    seconds: float


def _apprise_object(url: str) -> Any:
    import apprise  # imported on use: it loads 100+ plugins

    logging.getLogger("apprise").setLevel(logging.WARNING)
    return apprise.Apprise.instantiate(url, suppress_exceptions=True)


def url_problem(url: str) -> str | None:
    """Why Apprise cannot use this URL (one line), or None when it can."""
    if url == AUTODL_WECHAT:
        return None
    if "://" not in url:
        return _(
            "not a notification URL (want SCHEME://..., e.g. ntfy://TOPIC, json://HOST:PORT/PATH, or autodl-wechat)"
        )
    _register(url)
    if _apprise_object(url) is None:
        scheme = url.split("://", 1)[0]
        return _(
            "Apprise cannot use this {scheme}:// URL (unknown service, or a part is missing); "
            "see https://github.com/caronc/apprise/wiki"
        ).format(scheme=scheme)
    return None


def service_name(url: str) -> str:
    if url == AUTODL_WECHAT:
        return _("AutoDL WeChat")
    obj = _apprise_object(url)
    return str(obj.service_name) if obj is not None else url.split("://", 1)[0]


def _mask_word(word: str) -> str:
    return f"{word[0]}...{word[-1]}" if len(word) > 6 and "." not in word and ":" not in word else word


def masked(url: str) -> str:
    """The URL as Apprise's privacy mode writes it (tokens and passwords hidden), without its
    options, and with any long bare word left (an ntfy topic is its only secret) cut to a...z."""
    if url == AUTODL_WECHAT:
        return url
    obj = _apprise_object(url)
    private = str(obj.url(privacy=True)) if obj is not None else url.split("://", 1)[0] + "://****"
    scheme, _sep, rest = private.partition("://")
    rest = rest.split("?", 1)[0]
    auth, at, hostpath = rest.rpartition("@")
    parts = [_mask_word(p) for p in hostpath.split("/")]
    return f"{scheme}://{auth}{at}{'/'.join(parts)}".rstrip("/")


def _register(url: str) -> None:
    """Every piece of the URL that may be a token, for the log's redaction filter."""
    redact(url)
    try:
        parts = urlsplit(url)
        pieces = [parts.username, parts.password, parts.hostname, *parts.path.split("/"), parts.query]
    except ValueError:
        return
    for piece in pieces:
        if piece and len(piece) > 6 and "." not in piece:
            redact(piece)


def _succeed(fut: asyncio.Future[T], value: T) -> None:
    if not fut.done():
        fut.set_result(value)


def _fail(fut: asyncio.Future[T], error: BaseException) -> None:
    if not fut.done():
        fut.set_exception(error)


async def _in_thread(fn: Callable[[], T], timeout: float) -> T:
    """`fn()` in a daemon thread; TimeoutError after `timeout` (the thread is left to finish on
    its own: a daemon, so it cannot hold the process's exit)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        try:
            value = fn()
        except Exception as exc:  # handed to the awaiting task
            loop.call_soon_threadsafe(_fail, done, exc)
            return
        loop.call_soon_threadsafe(_succeed, done, value)

    threading.Thread(target=work, name="gpu-tui-notify", daemon=True).start()
    return await asyncio.wait_for(done, timeout)


def _with_timeouts(url: str, timeout: float) -> str:
    """Apprise's own connect / read timeouts (`cto`, `rto`), so its thread ends near the deadline."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}cto={timeout:g}&rto={timeout:g}"


def _send_apprise(url: str, title: str, body: str, timeout: float) -> str | None:
    obj = _apprise_object(_with_timeouts(url, timeout))
    if obj is None:
        return _("Apprise cannot use this URL")
    ok = bool(obj.notify(body=body, title=title))
    return None if ok else _("not delivered (the service refused it or did not answer; see the log)")


async def _send_wechat(token: SecretStr | None, title: str, body: str, name: str, timeout: float) -> str | None:
    if token is None:
        return _(
            "no AutoDL developer token stored (`keyring set gpu-tui provider:autodl`, or "
            "GPU_TUI_PASSWORD_PROVIDER_AUTODL)"
        )
    payload = json.dumps({"title": title, "name": name, "content": body}, ensure_ascii=False).encode()
    headers = {"Authorization": token.get_secret_value(), "Content-Type": "application/json"}
    try:
        answer = await fetch("POST", wechat_endpoint(), headers=headers, body=payload, timeout=timeout)
    except NotAUrl:
        return _("{provider} API: {url!r} is not a URL (check GPU_TUI_*_API)").format(
            provider=_("AutoDL WeChat"), url=wechat_endpoint()
        )
    except NoAnswer as exc:
        return exc.reason
    if answer.status >= 300:  # a 3xx too: the token must not follow a redirect elsewhere
        return _("HTTP {code}").format(code=answer.status)
    try:
        code = json.loads(answer.body).get("code")  # delivered only when AutoDL says Success
    except (ValueError, AttributeError):
        return _("an answer gpu-tui cannot read")
    return None if code == "Success" else _("refused: {code}").format(code=code)


async def send_one(
    target: Target,
    title: str,
    body: str,
    *,
    instance: str = "",
    wechat_token: SecretStr | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    attempts: int = 1,
) -> Delivery:
    """Send to one target, `attempts` times at most, each within `timeout` seconds."""
    url = target.url.get_secret_value()
    _register(url)
    started = time.monotonic()
    error: str | None = None
    for _attempt in range(max(1, attempts)):
        try:
            if url == AUTODL_WECHAT:
                error = await asyncio.wait_for(
                    _send_wechat(wechat_token, title, body, instance or "gpu-tui", timeout), timeout + 2
                )
            else:
                error = await _in_thread(partial(_send_apprise, url, title, body, timeout), timeout + 2)
        except TimeoutError:
            error = _("no answer within {seconds:g} s").format(seconds=timeout)
        except Exception as exc:  # a plugin's bug must not take the other targets down
            log.warning("notify %s: %s", target.shown, type(exc).__name__)
            error = _("failed: {error}").format(error=type(exc).__name__)
        if error is None:
            break
    if error is not None:
        log.warning("notify %s: %s", target.shown, error)
    return Delivery(target, error is None, error, time.monotonic() - started)


async def send_all(
    targets: Sequence[Target],
    title: str,
    body: str,
    *,
    instance: str = "",
    wechat_token: SecretStr | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    attempts: int = 1,
) -> list[Delivery]:
    """Send to every target at once; one Delivery per target, in their order."""
    return list(
        await asyncio.gather(
            *(
                send_one(
                    t, title, body, instance=instance, wechat_token=wechat_token, timeout=timeout, attempts=attempts
                )
                for t in targets
            )
        )
    )
