"""What a forwarded port is, before any socket: `PORT[:LOCAL]` as typed, the presets, the URL.

Pure (no I/O): the CLI, the service and the forward screen share it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from gpu_tui.core.i18n import N_, _

__all__ = ["PRESETS", "ForwardSpec", "Preset", "local_url", "loopback_only", "parse_spec", "preset_for"]

DEFAULT_BIND = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class Preset:
    port: int
    label: str
    """Marked English (`_()` it where shown)."""


PRESETS: tuple[Preset, ...] = (
    Preset(6006, N_("TensorBoard")),
    Preset(8888, N_("Jupyter")),
    Preset(7860, N_("Gradio")),
    Preset(8000, N_("OpenAI-compatible API")),
)
"""The ports renters open most (docs/FIELD_NOTES.md, "Ports, IDEs and mirrors"); vLLM serves its OpenAI API on 8000."""


def preset_for(port: int) -> Preset | None:
    return next((p for p in PRESETS if p.port == port), None)


@dataclass(frozen=True, slots=True)
class ForwardSpec:
    """Instance port `remote` reachable on this machine at `bind`:`local` (local 0: any free port)."""

    remote: int
    local: int

    def __str__(self) -> str:
        return str(self.remote) if self.remote == self.local else f"{self.remote}:{self.local}"


def _port(text: str, what: str, spec: str, *, zero: bool) -> int:
    low = 0 if zero else 1
    if not text.isdigit() or not low <= int(text) <= 65535:
        raise ValueError(
            _("{spec}: {what} must be a port number {low}-65535, got {text!r} (e.g. 6006 or 6006:16006)").format(
                spec=spec, what=_(what), low=low, text=text
            )
        )
    return int(text)


def parse_spec(text: str) -> ForwardSpec:
    """`6006` (the same port here) or `6006:16006` (instance port, then local; 0 = any free one).
    ValueError with one line saying what is wrong and how to write it."""
    spec = text.strip()
    remote_text, sep, local_text = spec.partition(":")
    remote = _port(remote_text, N_("the instance port"), spec, zero=False)
    local = _port(local_text, N_("the local port"), spec, zero=True) if sep else remote
    return ForwardSpec(remote, local)


def loopback_only(bind: str) -> bool:
    """Whether `bind` keeps a forward to this machine (a name other than localhost: not known)."""
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind).is_loopback
    except ValueError:
        return False


def local_url(bind: str, port: int) -> str:
    """Where a browser on this machine opens the forward: a wildcard bind is reached on loopback."""
    host = DEFAULT_BIND if bind in ("0.0.0.0", "", "*") else "[::1]" if bind == "::" else bind
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"
