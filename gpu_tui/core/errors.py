"""Errors that carry a short title for the UI and a message a user can act on.

Every error a user can meet derives from `GpuTuiError`: the CLI prints `title: message` and
exits 2 (or 3 for remote failures), the dashboard shows the title as a state. `exc.line()` (or
`error_line(exc)`) is that `title: message`, made printable: a message often quotes what an
instance said, and its escapes and control characters must not reach a terminal.

Titles are English class attributes (marked with `N_`: code and tests compare them), shown
translated by `line()` and `shown_title`. The message is in the language in force; where a
JSON output carries it, the error is raised with a `Said` (core/bilingual.py) and `english`
keeps the English form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_tui.core.i18n import N_, _
from gpu_tui.core.text import printable

if TYPE_CHECKING:
    from gpu_tui.core.bilingual import Said

__all__ = [
    "error_line",
    "GpuTuiError",
    "ConfigError",
    "InputError",
    "SecretError",
    "RemoteError",
    "Unreachable",
    "AuthFailed",
    "HostKeyChanged",
    "HostKeyUnknown",
    "ConnectionLost",
    "CommandTimeout",
]


class GpuTuiError(Exception):
    """Base class: `title` is a few words for a status line, `message` the full sentence."""

    title = N_("error")

    def __init__(self, message: str | Said, *, english: str | None = None) -> None:
        text = message if isinstance(message, str) else message.text
        super().__init__(text)
        self.message = text
        """In the language in force."""
        self.english = (message if isinstance(message, str) else message.english) if english is None else english
        """The message in English (the same text when it was raised with a plain string)."""

    def __str__(self) -> str:
        return self.message

    @property
    def shown_title(self) -> str:
        """The title in the language in force."""
        return _(self.title)

    def line(self) -> str:
        """`title: message` for a status line or stderr, without control characters or escapes.
        Plain text: the UI passes it on as `rich.text.Text` or with `markup=False`."""
        return printable(f"{self.shown_title}: {self.message}")


def error_line(exc: BaseException) -> str:
    """`title: message` for a GpuTuiError (its `line()`), `TypeName: text` for anything else;
    printable either way."""
    if isinstance(exc, GpuTuiError):
        return exc.line()
    text = str(exc)
    return printable(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


class ConfigError(GpuTuiError):
    """The config file (or a command-line value) is invalid; exit code 2."""

    title = N_("configuration error")


class InputError(GpuTuiError):
    """Input refused before anything ran (an empty command, a missing directory, an unknown env
    or job); exit code 2."""

    title = N_("refused")


class SecretError(GpuTuiError):
    """A secret could not be read or stored (keyring missing or locked)."""

    title = N_("secret unavailable")


class RemoteError(GpuTuiError):
    """Something went wrong talking to an instance."""

    title = N_("remote error")


class Unreachable(RemoteError):
    """No TCP/SSH session could be made within the connect timeout."""

    title = N_("unreachable")


class AuthFailed(RemoteError):
    """The server refused every credential we offered."""

    title = N_("auth failed")


class HostKeyChanged(RemoteError):
    """The server's key differs from the one recorded for it: refused, never trusted silently."""

    title = N_("host key changed")

    def __init__(self, message: str | Said, fingerprint: str, key_line: str = "") -> None:
        super().__init__(message)
        self.fingerprint = fingerprint
        self.key_line = key_line


class HostKeyUnknown(RemoteError):
    """The server's key is not known yet; it is trusted only when the user accepts it."""

    title = N_("unknown host key")

    def __init__(self, message: str | Said, fingerprint: str, key_line: str = "") -> None:
        super().__init__(message)
        self.fingerprint = fingerprint
        self.key_line = key_line


class ConnectionLost(RemoteError):
    """An established connection dropped (keepalive timeout, reset, server exit)."""

    title = N_("offline")


class CommandTimeout(RemoteError):
    """A remote command did not finish within its timeout."""

    title = N_("timeout")
