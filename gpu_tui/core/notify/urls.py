"""Notification targets in Apprise URL syntax, as the instance-side sender sends them (issue 15).

`request_for(url)` turns one URL into a `Request`: method, URL, headers and a JSON body template
the shipped sender (services/notify/sender.py, or the curl/wget path of
services/notify/sender.sh) fills in at send time. Templates hold marker strings the sender
replaces: `@TITLE@` (the first line), `@BODY@` (the rest), `@TEXT@` (both, for services with one
text field), and for signed robots `@TS@` / `@SIGN@`. The request shapes follow each service's
own documentation (docs/NOTIFY.md).

The instance side speaks `INSTANCE_SCHEMES`; every other Apprise scheme is sent by the laptop
only (`support_reason`). Signing (DingTalk, Feishu with a secret) needs HMAC-SHA256 there:
python3, else openssl.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import quote, unquote, urlsplit

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _

__all__ = [
    "INSTANCE_SCHEMES",
    "SIGNING_SCHEMES",
    "MARKERS",
    "ENDPOINTS",
    "Request",
    "Unsupported",
    "endpoint",
    "scheme_of",
    "request_for",
    "mask",
    "autodl_wechat",
    "support_reason",
]

INSTANCE_SCHEMES = (
    "json",
    "jsons",
    "ntfy",
    "ntfys",
    "lark",
    "feishu",
    "dingtalk",
    "wecombot",
    "schan",
    "pushplus",
    "tgram",
    "autodl-wechat",
)
"""Schemes the instance sends itself; the rest (slack, discord, mailto, ...) are laptop-only."""
SIGNING_SCHEMES = ("dingtalk", "lark", "feishu")
"""Schemes whose request may need an HMAC-SHA256 signature (when the URL carries a secret)."""
MARKERS = ("@TITLE@", "@BODY@", "@TEXT@", "@TS@", "@SIGN@")

ENDPOINTS = {
    "feishu": "https://open.feishu.cn/open-apis/bot/v2/hook/",
    "lark": "https://open.larksuite.com/open-apis/bot/v2/hook/",
    "dingtalk": "https://oapi.dingtalk.com/robot/send?access_token=",
    "wecombot": "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=",
    "schan": "https://sctapi.ftqq.com/{key}.send",
    "pushplus": "https://www.pushplus.plus/send",
    "tgram": "https://api.telegram.org/bot",
    "ntfy": "https://ntfy.sh/",
}
"""The hosted services' endpoints (their documentation's); `base=` swaps the scheme and host."""
AUTODL_WECHAT_PATH = "/api/v1/wechat/message/send"

_TOKENISH = re.compile(r"[A-Za-z0-9_\-:.]{6,}")

Sign = Literal["dingtalk", "feishu"] | None


class Unsupported(InputError):
    """A URL the instance-side sender cannot send (laptop-only scheme, malformed URL)."""


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request template for one target."""

    scheme: str
    url: str
    body: object
    """A JSON value whose strings may be (exactly) one of MARKERS."""
    headers: tuple[tuple[str, str], ...] = ()
    sign: Sign = None
    secret: str = field(default="", repr=False)
    ok_field: str | None = None
    """The reply's JSON field that says it was accepted (HTTP 2xx alone when None)."""
    ok_values: tuple[object, ...] = ()
    timestamp_ms: bool = False
    """The signature's timestamp in milliseconds (DingTalk) rather than seconds (Feishu)."""


def endpoint(scheme: str, base: str | None) -> str:
    """The service's endpoint, or the same path under `base` (a proxy, or a test server)."""
    url = ENDPOINTS[scheme]
    if not base:
        return url
    parts = urlsplit(url)
    return base.rstrip("/") + url[len(f"{parts.scheme}://{parts.netloc}") :]


def scheme_of(url: str) -> str:
    """`dingtalk` for `dingtalk://...`; the URL lower-cased when it has no `://` (autodl-wechat)."""
    head, sep, _rest = url.strip().partition("://")
    return head.lower() if sep else url.strip().lower()


def _query(query: str) -> list[tuple[str, str]]:
    """The query's pairs; unlike parse_qsl a `+` stays a `+` (Apprise's `+Header=value`)."""
    pairs = []
    for item in query.split("&"):
        if item:
            key, _eq, value = item.partition("=")
            pairs.append((unquote(key), unquote(value)))
    return pairs


def _parts(url: str) -> tuple[str, str, str, dict[str, str]]:
    """(user-info, host, path, query) of `scheme://...`, without urllib's port parsing (a
    Telegram bot token holds a colon)."""
    rest = url.strip().partition("://")[2]
    rest, _hash, _frag = rest.partition("#")
    rest, _q, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if not at:
        userinfo, host = "", netloc
    args = {k.lower(): v for k, v in _query(query)}
    return unquote(userinfo), unquote(host), slash + path, args


def _need(value: str, what: str, url: str) -> str:
    if not value:
        raise Unsupported(_("{url}: the {what} is missing").format(url=mask(url), what=what))
    return value


def _ntfy(url: str, secure: bool, base: str | None) -> Request:
    userinfo, host, path, args = _parts(url)
    topics = [t for t in path.split("/") if t]
    if not topics:
        # ntfy://topic: the public server
        server, topics = endpoint("ntfy", base).rstrip("/"), [host]
    else:
        server = ("https://" if secure else "http://") + host
    headers: list[tuple[str, str]] = [("Content-Type", "application/json")]
    user, colon, password = userinfo.partition(":")
    token = args.get("token") or (user if user and not colon else "")
    if token:
        headers.append(("Authorization", "Bearer " + token))
    elif colon:
        import base64  # noqa: PLC0415 (only basic auth needs it)

        headers.append(("Authorization", "Basic " + base64.b64encode(userinfo.encode()).decode()))
    body: dict[str, object] = {"topic": _need(topics[0], _("topic"), url), "title": "@TITLE@", "message": "@BODY@"}
    prio = {"min": 1, "low": 2, "default": 3, "high": 4, "max": 5}.get(args.get("priority", "").lower())
    if prio is None and args.get("priority", "").isdigit():
        prio = min(5, max(1, int(args["priority"])))
    if prio is not None:
        body["priority"] = prio
    if args.get("tags"):
        body["tags"] = [t for t in args["tags"].split(",") if t]
    return Request("ntfys" if secure else "ntfy", server + "/", body, tuple(headers))


def _json(url: str, secure: bool) -> Request:
    parts = urlsplit(url.strip())
    host = _need(parts.hostname or "", _("host"), url)
    port = f":{parts.port}" if parts.port else ""
    headers: list[tuple[str, str]] = [("Content-Type", "application/json")]
    if parts.username:
        import base64  # noqa: PLC0415

        cred = unquote(parts.username) + ":" + unquote(parts.password or "")
        headers.append(("Authorization", "Basic " + base64.b64encode(cred.encode()).decode()))
    query = []
    for key, value in _query(parts.query):
        if key.startswith("+"):
            headers.append((key[1:], value))  # Apprise: `+Header=value` adds a header
        elif key.startswith("-") or key.startswith(":") or key.lower() in ("method", "format", "overflow"):
            continue
        else:
            query.append(f"{quote(key, safe='')}={quote(value, safe='')}")
    target = ("https://" if secure else "http://") + host + port + (parts.path or "/")
    if query:
        target += "?" + "&".join(query)
    body = {"version": "1.0", "title": "@TITLE@", "message": "@BODY@", "type": "info"}
    return Request("jsons" if secure else "json", target, body, tuple(headers))


def _feishu(url: str, scheme: str, base: str | None) -> Request:
    userinfo, host, path, args = _parts(url)
    token = _need(host, _("bot token"), url)
    secret = args.get("secret") or userinfo
    hook = endpoint(scheme, base)
    body: dict[str, object] = {"msg_type": "text", "content": {"text": "@TEXT@"}}
    if secret:
        body = {"timestamp": "@TS@", "sign": "@SIGN@", **body}
    return Request(
        scheme,
        hook + token,
        body,
        (("Content-Type", "application/json"),),
        sign="feishu" if secret else None,
        secret=secret,
        ok_field="code",
        ok_values=(0,),
    )


def _dingtalk(url: str, base: str | None) -> Request:
    userinfo, host, _path, args = _parts(url)
    token = _need(host, _("access token"), url)
    secret = args.get("secret") or userinfo
    target = endpoint("dingtalk", base) + quote(token, safe="")
    if secret:
        target += "&timestamp=@TS@&sign=@SIGN@"
    body = {"msgtype": "text", "text": {"content": "@TEXT@"}}
    return Request(
        "dingtalk",
        target,
        body,
        (("Content-Type", "application/json"),),
        sign="dingtalk" if secret else None,
        secret=secret,
        ok_field="errcode",
        ok_values=(0,),
        timestamp_ms=True,
    )


def _wecom(url: str, base: str | None) -> Request:
    _user, host, _path, args = _parts(url)
    key = _need(args.get("key") or host, _("bot key"), url)
    body = {"msgtype": "text", "text": {"content": "@TEXT@"}}
    return Request(
        "wecombot",
        endpoint("wecombot", base) + quote(key, safe=""),
        body,
        (("Content-Type", "application/json"),),
        ok_field="errcode",
        ok_values=(0,),
    )


def _serverchan(url: str, base: str | None) -> Request:
    _user, host, _path, _args = _parts(url)
    key = _need(host, _("SendKey"), url)
    body = {"title": "@TITLE@", "desp": "@BODY@"}
    return Request(
        "schan",
        endpoint("schan", base).format(key=quote(key, safe="")),
        body,
        (("Content-Type", "application/json"),),
        ok_field="code",
        ok_values=(0,),
    )


def _pushplus(url: str, base: str | None) -> Request:
    _user, host, _path, args = _parts(url)
    token = _need(args.get("token") or host, _("token"), url)
    body = {"token": token, "title": "@TITLE@", "content": "@BODY@", "template": "txt"}
    return Request(
        "pushplus",
        endpoint("pushplus", base),
        body,
        (("Content-Type", "application/json"),),
        ok_field="code",
        ok_values=(200,),
    )


def _telegram(url: str, base: str | None) -> Request:
    _user, host, path, args = _parts(url)
    token = _need(host[3:] if host.startswith("bot") else host, _("bot token"), url)
    chats = [c for c in path.split("/") if c] or [c for c in args.get("to", "").split(",") if c]
    body = {"chat_id": _need(chats[0] if chats else "", _("chat id"), url), "text": "@TEXT@"}
    return Request(
        "tgram",
        endpoint("tgram", base) + token + "/sendMessage",
        body,
        (("Content-Type", "application/json"),),
        ok_field="ok",
        ok_values=(True,),
    )


def autodl_wechat(token: str, base: str, url: str = "autodl-wechat") -> Request:
    """AutoDL's WeChat message API with the developer token as the whole Authorization header."""
    _user, _host, _path, args = _parts(url) if "://" in url else ("", "", "", {})
    body = {"title": "@TITLE@", "name": args.get("name") or "gpu-tui", "content": "@BODY@"}
    headers = (("Content-Type", "application/json"), ("Authorization", token))
    return Request(
        "autodl-wechat", base.rstrip("/") + AUTODL_WECHAT_PATH, body, headers, ok_field="code", ok_values=("Success",)
    )


def request_for(
    url: str, *, autodl_token: str | None = None, autodl_base: str = "https://www.autodl.com", base: str | None = None
) -> Request:
    """The request the instance sends for `url`; Unsupported when it cannot. `base` replaces the
    hosted services' `https://host` (GPU_TUI_NOTIFY_BASE: a proxy, or a test server)."""
    try:
        return _request_for(url, autodl_token=autodl_token, autodl_base=autodl_base, base=base)
    except ValueError as exc:  # urllib's own refusals (a port out of range, a broken [host])
        raise Unsupported(
            _("{target}: not a URL the instance can send to ({error})").format(target=mask(url), error=exc)
        ) from None


def _request_for(url: str, *, autodl_token: str | None, autodl_base: str, base: str | None) -> Request:
    scheme = scheme_of(url)
    if scheme in ("json", "jsons"):
        return _json(url, scheme == "jsons")
    if scheme in ("ntfy", "ntfys"):
        return _ntfy(url, scheme == "ntfys", base)
    if scheme in ("lark", "feishu"):
        return _feishu(url, scheme, base)
    if scheme == "dingtalk":
        return _dingtalk(url, base)
    if scheme == "wecombot":
        return _wecom(url, base)
    if scheme == "schan":
        return _serverchan(url, base)
    if scheme == "pushplus":
        return _pushplus(url, base)
    if scheme == "tgram":
        return _telegram(url, base)
    if scheme == "autodl-wechat":
        if not autodl_token:
            raise Unsupported(_("autodl-wechat: no AutoDL developer token in the keyring (provider:autodl)"))
        return autodl_wechat(autodl_token, autodl_base, url)
    raise Unsupported(
        _("{scheme}://: sent from the laptop only (the instance sends {schemes})").format(
            scheme=scheme, schemes=", ".join(INSTANCE_SCHEMES)
        )
    )


def support_reason(url: str) -> str | None:
    """None when the instance can send `url` (signing aside), else why not, translated."""
    scheme = scheme_of(url)
    if scheme not in INSTANCE_SCHEMES:
        return _("{scheme}: sent from the laptop only").format(scheme=scheme)
    if scheme == "autodl-wechat":
        return None
    try:
        request_for(url)
    except Unsupported as exc:
        return str(exc)
    return None


def _mask_word(word: str) -> str:
    if len(word) <= 4:
        return "****"
    return word[:2] + "****" + word[-2:] if len(word) > 8 else word[:1] + "****"


def mask(url: str) -> str:
    """The URL with its tokens, keys, passwords and secrets hidden: `dingtalk://ab****yz/`."""
    text = url.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    rest, q, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if at:
        netloc = "****@" + host
    if scheme.lower() in ("ntfy", "ntfys"):
        # a topic is the only secret a public ntfy server knows; the host names a server
        path = "/".join(_mask_word(p) if p else p for p in path.split("/"))
        if not slash:
            netloc = _mask_word(netloc)
    elif scheme.lower() in ("json", "jsons"):
        # the host names a server; a path segment that looks like a token is one
        path = "/".join(_mask_word(p) if _TOKENISH.fullmatch(p) and len(p) >= 12 else p for p in path.split("/"))
    else:
        netloc = ("****@" if at else "") + _mask_word(host)
        path = "/".join(_mask_word(p) if p else p for p in path.split("/"))
    # every value: a header (`+X-Api-Key=...`) or any other option may carry a token
    masked_query = "&".join(f"{k}=****" for k, _v in _query(query))
    return f"{scheme}://{netloc}{slash}{path}" + (q + masked_query if masked_query else "")
