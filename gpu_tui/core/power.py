"""How each provider's instance is turned off from inside, and how long a provider keeps a
stopped instance and its data (the provider profiles).

The command is one shell line run ON the instance, by gpu-tui's shutdown and by the autostop
watchdog alike, so both stop billing the same way.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.units import format_duration_s, format_local_datetime

__all__ = ["shutdown_line", "PROFILES", "ReleaseRule", "RELEASE_RULES", "rule_for", "release_at", "release_line", "DAY"]

PROFILES: dict[str, str] = {
    # AutoDL: shutdown inside the container stops the instance and its billing (FIELD_NOTES)
    "autodl": "/usr/bin/shutdown",
    # root shuts down directly; anyone else only through passwordless sudo (-n: never prompt)
    "generic": 'if [ "$(id -u)" = 0 ]; then shutdown -h now; else sudo -n shutdown -h now; fi',
    "runpod": 'runpodctl stop pod "$RUNPOD_POD_ID"',
    "vast": "vastai stop instance {provider_id}",
}


def shutdown_line(provider: str, *, provider_id: str = "", override: str = "") -> str:
    """The shell line that powers the instance off: the per-instance `shutdown_command` when
    set, else the provider's profile (unknown providers are generic)."""
    if override.strip():
        return override.strip()
    template = PROFILES.get(provider, PROFILES["generic"])
    if "{provider_id}" in template:
        if not provider_id:
            raise InputError(
                _(
                    "provider {provider!r} needs `provider_id` (the instance id its CLI stops) in the "
                    "instance's config entry, or a `shutdown_command`"
                ).format(provider=provider)
            )
        return template.format(provider_id=shlex.quote(provider_id))
    return template


# ---------------------------------------------------------------- release of a stopped instance
# When a provider may release a stopped instance, and its data with it (issue 28). AutoDL releases
# an instance that has stayed powered off for 15 days; booting it without a GPU (无卡模式, billed at
# a small fraction of the GPU price) starts the count again. RunPod keeps a stopped pod's volume
# while the account's balance lasts, and Vast.ai a stopped instance's storage while it bills: no
# date, but the storage bills meanwhile. An instance's `release_days` overrides its provider's
# days (0: never). gpu-tui knows from its ledger when it last saw each instance up; an instance it
# cannot reach counts as powered off, since a powered-off AutoDL box is one that no longer answers.

DAY = 86400.0


@dataclass(frozen=True, slots=True)
class ReleaseRule:
    days: float | None
    """Days powered off before the provider may release it; None: no date (kept while it bills)."""
    keeps: str
    """What keeps it (English, marked: `_()` it where shown)."""


RELEASE_RULES: dict[str, ReleaseRule] = {
    "autodl": ReleaseRule(
        15.0,
        N_("power it on without a GPU (无卡模式) in AutoDL's console, or with `gpu-tui start`: the count starts again"),
    ),
    "runpod": ReleaseRule(None, N_("RunPod keeps a stopped pod's volume while the balance lasts; it bills meanwhile")),
    "vast": ReleaseRule(None, N_("Vast.ai keeps a stopped instance's storage while it bills")),
}


def rule_for(provider: str, release_days: float | None) -> ReleaseRule | None:
    """The provider's rule, its days replaced by the instance's `release_days` where set; None
    where no rule applies (a lab box, `release_days = 0`)."""
    rule = RELEASE_RULES.get(provider)
    if release_days is not None:
        if release_days <= 0:
            return None
        keeps = rule.keeps if rule is not None else N_("power it on before then")
        return ReleaseRule(float(release_days), keeps)
    return rule


def release_at(rule: ReleaseRule | None, last_seen_up: float | None, *, up: bool) -> float | None:
    """The earliest time the provider may release it: last seen up + the rule's days. None while
    it is up, where no rule gives days, or where gpu-tui never saw it up."""
    if up or rule is None or rule.days is None or last_seen_up is None:
        return None
    return last_seen_up + rule.days * DAY


def release_line(name: str, at: float, now: float, rule: ReleaseRule) -> str:
    """One sentence: when the provider may release it, and what keeps it."""
    if at <= now:
        head = _("{name}: its provider may release it and its data now (since {date})")
    else:
        head = _("{name}: its provider may release it and its data from {date} (in {duration})")
    return (
        head.format(name=name, date=format_local_datetime(at), duration=format_duration_s(max(0.0, at - now)))
        + "; "
        + _("to keep it: {keeps}").format(keeps=_(rule.keeps))
    )
