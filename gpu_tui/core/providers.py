"""Provider accounts as gpu-tui sees them: an instance listed by a provider's API, a balance,
and what an import writes into the config. Pure: the API clients (services/providers) fill
these in, the commands and the dashboard read them.

Each provider names its states its own way (RunPod `desiredStatus` RUNNING / EXITED, Vast
`actual_status` running / stopped / loading, AutoDL Pro `running` / `starting` / `shutdown`);
`status` is the one word gpu-tui uses for all of them, `raw_status` the provider's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from gpu_tui.core.i18n import N_

__all__ = [
    "port_of",
    "API_PROVIDERS",
    "PENDING_HOST",
    "AccountBalance",
    "PowerState",
    "STATUS_WORDS",
    "ProviderInstance",
    "import_fields",
    "import_name",
    "normalise_status",
]

PENDING_HOST = "pending.invalid"
"""The host of an imported instance whose endpoint is not known yet (RFC 2606: never resolves)."""

API_PROVIDERS: tuple[str, ...] = ("runpod", "vast", "autodl")
"""Providers with a documented API gpu-tui talks to (AutoDL: its Pro instances only)."""

PowerState = Literal["running", "starting", "stopping", "stopped", "unknown"]
STATUS_WORDS: Mapping[str, str] = {
    "running": N_("running"),
    "starting": N_("starting"),
    "stopping": N_("stopping"),
    "stopped": N_("stopped"),
    "unknown": N_("unknown"),
}
"""gpu-tui's words for the states, for `_()` where they are shown."""

_STATES: Mapping[str, PowerState] = {
    # RunPod desiredStatus
    "RUNNING": "running",
    "EXITED": "stopped",
    "TERMINATED": "stopped",
    "CREATED": "starting",
    # Vast actual_status (docs.vast.ai, show instances)
    "running": "running",
    "stopped": "stopped",
    "exited": "stopped",
    "loading": "starting",
    "created": "starting",
    "rebooting": "starting",
    "scheduling": "starting",
    # AutoDL Pro status
    "starting": "starting",
    "shutting_down": "stopping",
    "shutdown": "stopped",
    "powered_off": "stopped",
    "creating": "starting",
    "re_initializing": "starting",
}


def port_of(value: object) -> int | None:
    """A port as an API gives it (an int, or digits in a string); None for anything else: an
    endpoint gpu-tui cannot use is no endpoint."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        port = value
    elif isinstance(value, str) and value.strip().isdigit():
        port = int(value.strip())
    else:
        return None
    return port if 1 <= port <= 65535 else None


def normalise_status(raw: str | None) -> PowerState:
    """gpu-tui's word for a provider's state; `unknown` for anything else (None included)."""
    if not raw:
        return "unknown"
    return _STATES.get(raw, _STATES.get(raw.lower(), "unknown"))


@dataclass(frozen=True, slots=True)
class ProviderInstance:
    """One instance as the provider's API lists it."""

    provider: str
    id: str
    """The provider's id (RunPod pod id, Vast instance id, AutoDL instance uuid)."""
    name: str
    """The provider's label for it (may be empty)."""
    status: PowerState
    raw_status: str
    """The provider's own word, for messages."""
    gpu: str
    """`2x RTX 4090`; empty when the API does not say."""
    price_per_hour: float | None
    currency: str
    """The symbol the provider bills in: `$` (RunPod, Vast) or `¥` (AutoDL)."""
    ssh_host: str | None = None
    ssh_port: int | None = None
    ssh_user: str | None = "root"

    @property
    def has_endpoint(self) -> bool:
        return self.ssh_host is not None and self.ssh_port is not None


@dataclass(frozen=True, slots=True)
class AccountBalance:
    """The money left on an account, in the provider's currency."""

    provider: str
    balance: float
    currency: str
    spend_per_hour: float | None = None
    """What the account burns now, where the API says (RunPod `currentSpendPerHr`)."""

    def hours_left(self, burn_per_hour: float | None = None) -> float | None:
        burn = self.spend_per_hour if burn_per_hour is None else burn_per_hour
        return self.balance / burn if burn else None


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    return re.sub(r"-{2,}", "-", slug).strip("-.")


def import_name(inst: ProviderInstance, taken: Iterable[str]) -> str:
    """A config-valid name for a newly imported instance: `runpod-<label>` or `runpod-<id>`,
    `-2`, `-3`... when taken (compared without case, as the password variable upper-cases)."""
    label = _slug(inst.name) or _slug(inst.id) or "instance"
    base = f"{inst.provider}-{label}"[:60].rstrip("-.")
    used = {t.lower() for t in taken}
    name, n = base, 2
    while name.lower() in used:
        name = f"{base}-{n}"
        n += 1
    return name


def import_fields(inst: ProviderInstance, *, name: str, settings_currency: str) -> dict[str, object]:
    """The config entry's fields for an imported instance. A stopped instance without an SSH
    endpoint yet keeps a placeholder host until `start` learns the real one; an update leaves
    the keys it does not set (identity_file, workdir, sync...) as the user wrote them."""
    fields: dict[str, object] = {
        "name": name,
        "host": inst.ssh_host or PENDING_HOST,
        "provider": inst.provider,
        "provider_id": inst.id,
    }
    if inst.ssh_port is not None:
        fields["port"] = inst.ssh_port
    if inst.ssh_user:
        fields["user"] = inst.ssh_user
    if inst.price_per_hour is not None:
        fields["hourly_rate"] = round(inst.price_per_hour, 4)
    if inst.currency != settings_currency:
        fields["currency"] = inst.currency
    return fields
