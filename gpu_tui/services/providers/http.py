"""The one HTTP client of every laptop-side provider and AutoDL call: the provider APIs (JsonApi),
AutoDL's balance and its WeChat push all send through `fetch`, on httpx's async client.

What `fetch` promises every caller: a redirect is never followed (it is an answer like any other,
so a token in a header never reaches another host); the whole exchange, body included, ends
within `timeout` (httpx's own timeouts are per read, so a server dripping one byte at a time
would hold the call as long as it liked); a refused connection, a garbled or cut-short answer
and the deadline are all `NoAnswer`, one line; a URL that is none (a bad GPU_TUI_*_API) is
`NotAUrl`. Tokens go in headers only, never in a URL, and httpx's request log is kept quiet.

JsonApi adds JSON, the provider's own words in errors, and retries of reads only
(`idempotent=True`): a start or stop sent twice could bill twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import urlencode, urlsplit

from gpu_tui.core.errors import AuthFailed, InputError, RemoteError, Unreachable
from gpu_tui.core.i18n import _

__all__ = ["ApiHttpError", "Answer", "JsonApi", "NoAnswer", "NotAUrl", "call_count", "fetch", "provider_words"]

log = logging.getLogger(__name__)
_MAX_BODY = 4 * 1024 * 1024
_calls = 0
_calls_lock = threading.Lock()


class NoAnswer(Exception):
    """No whole HTTP answer in time: the network failed, or the answer was garbled, cut short or too slow."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotAUrl(Exception):
    """The URL cannot be sent to (no http(s) scheme, no host, a port that is no number)."""


class ApiHttpError(RemoteError):
    """The API answered with an HTTP error other than 401/403."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes


def call_count() -> int:
    """HTTP requests sent to any provider or AutoDL API by this process (the benchmark's API calls per minute)."""
    return _calls


def _count() -> None:
    global _calls
    with _calls_lock:
        _calls += 1


@cache
def _tls() -> ssl.SSLContext:
    """The system's trust store, as urllib used (httpx would bring certifi's); built once, as it
    costs more than the request, and shared by every event loop (a client is not)."""
    return ssl.create_default_context()


def _reason(exc: BaseException) -> str:
    """One line: the system's words where an OSError lies beneath (anyio's "All connection
    attempts failed" hides the refused connection), else the exception's own."""
    words = str(exc).strip() or type(exc).__name__
    cause: BaseException | None = exc
    for _depth in range(8):  # a chain, not a cycle
        if cause is None:
            break
        if isinstance(cause, OSError) and cause.strerror:
            code = cause.errno  # asyncio's own words ("Connect call failed") name no reason
            words = f"[Errno {code}] {os.strerror(code) if code is not None and code > 0 else cause.strerror}"
        cause = cause.__cause__ or cause.__context__
    return " ".join(words.split())[:200]  # a garbled answer's words are the server's: one short line


async def fetch(
    method: str, url: str, *, headers: Mapping[str, str], body: bytes | None = None, timeout: float = 10.0
) -> Answer:
    """One request and its whole answer (status and body, at most _MAX_BODY bytes)."""
    import httpx  # on use: it costs more to import than urllib, and most commands never call out

    logging.getLogger("httpx").setLevel(logging.WARNING)  # its INFO line per request is noise
    logging.getLogger("httpcore").setLevel(logging.WARNING)
    _count()
    try:
        async with asyncio.timeout(timeout):
            async with httpx.AsyncClient(follow_redirects=False, verify=_tls(), timeout=timeout) as client:
                # identity, as urllib sent: the cap then counts what the server sent
                sent = {"Accept-Encoding": "identity", **headers}
                async with client.stream(method, url, headers=sent, content=body) as resp:
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in resp.aiter_bytes():
                        chunks.append(chunk)
                        size += len(chunk)
                        if size >= _MAX_BODY:
                            break
                    return Answer(resp.status_code, b"".join(chunks)[:_MAX_BODY])
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        raise NotAUrl(_reason(exc)) from None
    except TimeoutError:
        raise NoAnswer(_("no answer within {seconds:g} s").format(seconds=timeout)) from None
    except (httpx.HTTPError, OSError, ImportError) as exc:  # ImportError: a SOCKS proxy in the env, no socksio
        raise NoAnswer(_reason(exc)) from None


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

    async def _once(self, method: str, url: str, body: bytes | None) -> Any:
        headers = {"Accept": "application/json", **self.headers}
        if body is not None:
            headers["Content-Type"] = "application/json"
        path = urlsplit(url).path
        try:
            answer = await fetch(method, url, headers=headers, body=body, timeout=self.timeout)
        except NotAUrl:
            raise InputError(
                _("{provider} API: {url!r} is not a URL (check GPU_TUI_*_API)").format(
                    provider=self.label, url=self.base
                )
            ) from None
        except NoAnswer as exc:
            raise Unreachable(
                _("{provider} API unreachable: {reason}").format(provider=self.label, reason=exc.reason)
            ) from None
        log.debug("%s API %s %s -> HTTP %s", self.label, method, path, answer.status)
        if answer.status >= 300:  # a 3xx too: redirects are not followed
            words = provider_words(answer.body[:65536])
            if answer.status in (401, 403):
                raise AuthFailed(
                    _("{provider} API refused the token (HTTP {code}: {words})").format(
                        provider=self.label, code=answer.status, words=words
                    )
                )
            raise ApiHttpError(
                _("{provider} API: HTTP {code}: {words}").format(provider=self.label, code=answer.status, words=words),
                status=answer.status,
            )
        if not answer.body.strip():
            return None
        try:
            return json.loads(answer.body)
        except ValueError:
            raise RemoteError(
                _("{provider} API: an answer gpu-tui cannot read: {body!r}").format(
                    provider=self.label, body=answer.body[:120]
                )
            ) from None

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None,
        idempotent: bool | None = None,
    ) -> Any:
        """The parsed JSON reply (None for an empty one). `idempotent` defaults to GET."""
        url = self.base.rstrip("/") + path
        if query:
            url += "?" + urlencode(query)
        data = json.dumps(body).encode() if body is not None else None
        tries = 1 + (self.retries if (method == "GET" if idempotent is None else idempotent) else 0)
        for attempt in range(tries):
            try:
                return await self._once(method, url, data)
            except Unreachable:
                if attempt + 1 >= tries:
                    raise
            except ApiHttpError as exc:
                if attempt + 1 >= tries or exc.status < 500:
                    raise
            await asyncio.sleep(self.retry_pause * (attempt + 1))
        raise AssertionError("unreachable")
