"""AutoDL's documented balance API (https://www.autodl.com/docs/common_api/), optional.

`POST {base}/api/v1/dev/wallet/balance` with the developer token (console -> settings ->
developer token) as the whole `Authorization` header; the reply is
`{"code": "Success", "msg": "", "data": {"assets": N, "accumulate": N, "voucher_balance": N}}`
with amounts in 1/1000 yuan. The token lives in the keyring under `provider:autodl`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from pydantic import SecretStr

from gpu_tui.core.errors import AuthFailed, InputError, RemoteError, Unreachable
from gpu_tui.core.i18n import _
from gpu_tui.services.providers.http import NoAnswer, NotAUrl, fetch

__all__ = ["Balance", "fetch_balance", "api_base", "TOKEN_NAME", "hours_left"]

DEFAULT_BASE = "https://api.autodl.com"
TOKEN_NAME = "provider:autodl"
"""The keyring username of the developer token (CONTRACTS: provider tokens)."""


def api_base() -> str:
    """The API's base URL; `GPU_TUI_AUTODL_API` overrides it (a proxy, or a test server)."""
    return os.environ.get("GPU_TUI_AUTODL_API", DEFAULT_BASE).rstrip("/")


@dataclass(frozen=True, slots=True)
class Balance:
    """The account's money, in yuan."""

    assets: float
    """`assets`: the current balance."""
    voucher: float
    """`voucher_balance`: vouchers still usable."""
    spent: float
    """`accumulate`: everything spent so far."""

    @property
    def usable(self) -> float:
        return self.assets + self.voucher


def hours_left(balance: Balance, burn_per_hour: float) -> float | None:
    """When the money runs out at this burn rate (None when nothing burns)."""
    return balance.usable / burn_per_hour if burn_per_hour > 0 else None


def _parse(body: bytes) -> Balance:
    try:
        reply = json.loads(body)
        if reply.get("code") != "Success":
            why = reply.get("msg") or reply.get("code")
            raise RemoteError(
                _("AutoDL balance API: {reason}").format(reason=why) if why else _("AutoDL balance API: refused")
            )
        data = reply["data"]
        return Balance(
            assets=int(data["assets"]) / 1000,
            voucher=int(data.get("voucher_balance", 0)) / 1000,
            spent=int(data.get("accumulate", 0)) / 1000,
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        unread = _("AutoDL balance API: an answer gpu-tui cannot read: {body!r}").format(body=body[:120])
        raise RemoteError(unread) from None


async def fetch_balance(token: SecretStr, *, base: str | None = None, timeout: float = 10.0) -> Balance:
    """The balance; RemoteError saying why not."""
    url = f"{base or api_base()}/api/v1/dev/wallet/balance"
    try:
        answer = await fetch(
            "POST", url, headers={"Authorization": token.get_secret_value()}, body=b"", timeout=timeout
        )
    except NotAUrl:
        raise InputError(
            _("{provider} API: {url!r} is not a URL (check GPU_TUI_*_API)").format(
                provider="AutoDL", url=base or api_base()
            )
        ) from None
    except NoAnswer as exc:
        raise Unreachable(_("AutoDL balance API: {reason}").format(reason=exc.reason)) from None
    if answer.status in (401, 403):
        raise AuthFailed(_("AutoDL balance API refused the developer token (check console -> settings)"))
    if answer.status >= 300:  # a 3xx too: the token does not follow a redirect
        raise RemoteError(_("AutoDL balance API: HTTP {code}").format(code=answer.status))
    return _parse(answer.body)
