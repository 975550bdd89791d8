"""The one HTTP helper of the provider clients: JSON over urllib, in a thread, with a timeout.

Like services/providers/autodl_balance.py (stdlib urllib, no new dependency): every call runs in
`asyncio.to_thread` so the dashboard's event loop never blocks, has a timeout, and only reads
(`idempotent=True`) are retried, as a start or stop sent twice could bill twice. The token is
in a header and never in a URL, a log line or a message. An error carries the provider's own
words (its JSON `error` / `msg` / `message`, else the start of the body).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_tui.core.errors import AuthFailed, InputError, RemoteError, Unreachable
from gpu_tui.core.i18n import _

__all__ = ["open_no_redirect", "ApiHttpError", "JsonApi", "call_count", "provider_words"]

log = logging.getLogger(__name__)
_MAX_BODY = 4 * 1024 * 1024
_calls = 0
_calls_lock = threading.Lock()


class ApiHttpError(RemoteError):
    """The API answered with an HTTP error other than 401/403."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def call_count() -> int:
    """HTTP requests sent to any provider API by this process (the benchmark's API calls per minute)."""
    return _calls


def _count() -> None:
    global _calls
    with _calls_lock:
        _calls += 1


def provider_words(body: bytes) -> str:
    """What the provider said about an error: its JSON message field, else the body's start."""
    try:
        reply = json.loads(body)
    except ValueError:
        reply = None
    if isinstance(reply, Mapping):
        for key in ("msg", "message", "detail", "error", "code"):  # a message before an error code
            value = reply.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:200]
    return body.decode("utf-8", "replace").strip()[:200]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """These APIs do not redirect; following one would hand the token to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def open_no_redirect(req: urllib.request.Request, timeout: float) -> Any:
    """urlopen that refuses redirects: for every request that carries a token."""
    return _OPENER.open(req, timeout=timeout)


def _read_by(resp: Any, deadline: float) -> bytes:
    """The body, up to _MAX_BODY, by `deadline` (a server dripping one byte at a time would
    otherwise hold the call for as long as it likes: the socket timeout is per read)."""
    chunks: list[bytes] = []
    size = 0
    while size < _MAX_BODY:
        if time.monotonic() > deadline:
            raise TimeoutError("the answer took too long")
        chunk = resp.read1(min(65536, _MAX_BODY - size)) if hasattr(resp, "read1") else resp.read(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


@dataclass(frozen=True)
class JsonApi:
    """One provider's API: its label (for messages), base URL and auth headers."""

    label: str
    base: str
    headers: Mapping[str, str] = field(repr=False)
    timeout: float = 10.0
    retries: int = 2
    """Extra tries of an idempotent call after a network error or a 5xx answer."""
    retry_pause: float = 0.5

    def _once(self, method: str, url: str, body: bytes | None) -> Any:
        headers = {"Accept": "application/json", **self.headers}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            req = urllib.request.Request(url, data=body, method=method, headers=headers)
        except ValueError:
            raise InputError(_("{provider} API: {url!r} is not a URL (check GPU_TUI_*_API)").format(
                provider=self.label, url=self.base)) from None
        _count()
        try:
            # never a redirect: urllib would carry the Authorization header to the other host
            with open_no_redirect(req, self.timeout) as resp:
                raw = _read_by(resp, time.monotonic() + self.timeout)
        except urllib.error.HTTPError as exc:
            words = provider_words(exc.read(65536))
            log.debug("%s API %s %s -> HTTP %s", self.label, method, urllib.parse.urlsplit(url).path, exc.code)
            if exc.code in (401, 403):
                raise AuthFailed(_("{provider} API refused the token (HTTP {code}: {words})").format(
                    provider=self.label, code=exc.code, words=words)) from None
            raise ApiHttpError(_("{provider} API: HTTP {code}: {words}").format(
                provider=self.label, code=exc.code, words=words), status=exc.code) from None
        except (urllib.error.URLError, TimeoutError, OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise Unreachable(_("{provider} API unreachable: {reason}").format(
                provider=self.label, reason=reason)) from None
        log.debug("%s API %s %s -> ok", self.label, method, urllib.parse.urlsplit(url).path)
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise RemoteError(_("{provider} API: an answer gpu-tui cannot read: {body!r}").format(
                provider=self.label, body=raw[:120])) from None

    def _call(self, method: str, url: str, body: bytes | None, idempotent: bool) -> Any:
        tries = 1 + (self.retries if idempotent else 0)
        for attempt in range(tries):
            try:
                return self._once(method, url, body)
            except Unreachable:
                if attempt + 1 >= tries:
                    raise
            except RemoteError as exc:
                if attempt + 1 >= tries or not isinstance(exc, ApiHttpError) or exc.status < 500:
                    raise
            time.sleep(self.retry_pause * (attempt + 1))
        raise AssertionError("unreachable")

    async def request(
        self, method: str, path: str, *, query: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None, idempotent: bool | None = None,
    ) -> Any:
        """The parsed JSON reply (None for an empty one). `idempotent` defaults to GET."""
        url = self.base.rstrip("/") + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = json.dumps(body).encode() if body is not None else None
        again = method == "GET" if idempotent is None else idempotent
        return await asyncio.to_thread(self._call, method, url, data, again)
