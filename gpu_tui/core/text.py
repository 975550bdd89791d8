"""Make remote text safe to show: no terminal control sequences, no surprises."""

from __future__ import annotations

import re

__all__ = ["printable", "strip_ansi"]

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (CSI, OSC, two-byte escapes)."""
    return _ANSI.sub("", text)


def printable(text: str) -> str:
    """One line of remote text for a terminal: escapes removed, other control characters shown as `?`."""
    return _CONTROL.sub("?", strip_ansi(text))
