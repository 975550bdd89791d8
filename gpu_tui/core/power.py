"""How each provider's instance is turned off from inside (the provider profiles).

The command is one shell line run ON the instance, by gpu-tui's shutdown and by the autostop
watchdog alike, so both stop billing the same way.
"""

from __future__ import annotations

import shlex

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _

__all__ = ["shutdown_line", "PROFILES"]

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
