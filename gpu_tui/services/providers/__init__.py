"""Clients of the providers' documented APIs (docs/PROVIDERS.md): list an account's instances,
power one on or off, read its state and the account's balance.

`client_for(provider, token)` gives one `ProviderClient`; `token_for(provider, secrets)` finds
the token (keyring `provider:<name>`, env `GPU_TUI_PASSWORD_PROVIDER_<NAME>`). Every method is
async; its HTTP goes through the one client in http.py.
"""

from __future__ import annotations

import os
from typing import Protocol

from pydantic import SecretStr

from gpu_tui.config.secrets import SecretStore, env_var_name
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.providers import API_PROVIDERS, AccountBalance, ProviderInstance

__all__ = ["ProviderClient", "api_base", "client_for", "token_env", "token_for", "token_key", "LABELS"]

DEFAULT_BASES = {
    "runpod": "https://rest.runpod.io/v1",
    "vast": "https://console.vast.ai/api/v0",
    "autodl": "https://api.autodl.com",
}
LABELS = {"runpod": "RunPod", "vast": "Vast.ai", "autodl": "AutoDL"}


class ProviderClient(Protocol):
    provider: str

    async def list_instances(self) -> list[ProviderInstance]: ...
    async def get(self, instance_id: str) -> ProviderInstance: ...
    async def start(self, instance_id: str) -> None: ...
    async def stop(self, instance_id: str) -> None: ...
    async def balance(self) -> AccountBalance: ...


def api_base(provider: str) -> str:
    """The documented base URL; `GPU_TUI_<PROVIDER>_API` overrides it (a proxy, a test server)."""
    return os.environ.get(f"GPU_TUI_{provider.upper()}_API", DEFAULT_BASES[provider]).rstrip("/")


def token_key(provider: str) -> str:
    """The keyring username of the provider's token (CONTRACTS: provider tokens)."""
    return f"provider:{provider}"


def token_env(provider: str) -> str:
    return env_var_name(token_key(provider))


def token_for(provider: str, secrets: SecretStore) -> SecretStr | None:
    return secrets.get_password(token_key(provider))


def check_provider(provider: str) -> str:
    if provider not in API_PROVIDERS:
        raise InputError(
            _("{provider!r} has no API gpu-tui can use; choose one of: {known}").format(
                provider=provider, known=", ".join(API_PROVIDERS)
            )
        )
    return provider


def client_for(provider: str, token: SecretStr, *, base: str | None = None, timeout: float = 10.0) -> ProviderClient:
    check_provider(provider)
    url = base or api_base(provider)
    if provider == "runpod":
        from gpu_tui.services.providers.runpod import RunPod

        return RunPod(token, url, timeout)
    if provider == "vast":
        from gpu_tui.services.providers.vast import Vast

        return Vast(token, url, timeout)
    from gpu_tui.services.providers.autodl_pro import AutoDLPro

    return AutoDLPro(token, url, timeout)
