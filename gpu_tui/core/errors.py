"""Errors that carry a short title for the UI and a message a user can act on.

Every error a user can meet derives from `GpuTuiError`: the CLI prints `title: message` and
exits 2 (or 3 for remote failures), the dashboard shows the title as a state. `exc.line()` (or
`error_line(exc)`) is that `title: message`, made printable: a message often quotes what an
instance said, and its escapes and control characters must not reach a terminal.
"""

from __future__ import annotations

from gpu_tui.core.text import printable

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

    title = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def line(self) -> str:
        """`title: message` for a status line or stderr, without control characters or escapes.
        Plain text: the UI passes it on as `rich.text.Text` or with `markup=False`."""
        return printable(f"{self.title}: {self.message}")


def error_line(exc: BaseException) -> str:
    """`title: message` for a GpuTuiError (its `line()`), `TypeName: text` for anything else;
    printable either way."""
    if isinstance(exc, GpuTuiError):
        return exc.line()
    text = str(exc)
    return printable(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


class ConfigError(GpuTuiError):
    """The config file (or a command-line value) is invalid; exit code 2."""

    title = "configuration error"


class InputError(GpuTuiError):
    """Input refused before anything ran (an empty command, a missing directory, an unknown env
    or job); exit code 2."""

    title = "refused"


class SecretError(GpuTuiError):
    """A secret could not be read or stored (keyring missing or locked)."""

    title = "secret unavailable"


class RemoteError(GpuTuiError):
    """Something went wrong talking to an instance."""

    title = "remote error"


class Unreachable(RemoteError):
    """No TCP/SSH session could be made within the connect timeout."""

    title = "unreachable"


class AuthFailed(RemoteError):
    """The server refused every credential we offered."""

    title = "auth failed"


class HostKeyChanged(RemoteError):
    """The server's key differs from the one recorded for it: refused, never trusted silently."""

    title = "host key changed"

    def __init__(self, message: str, fingerprint: str, key_line: str = "") -> None:
        super().__init__(message)
        self.fingerprint = fingerprint
        self.key_line = key_line


class HostKeyUnknown(RemoteError):
    """The server's key is not known yet; it is trusted only when the user accepts it."""

    title = "unknown host key"

    def __init__(self, message: str, fingerprint: str, key_line: str = "") -> None:
        super().__init__(message)
        self.fingerprint = fingerprint
        self.key_line = key_line


class ConnectionLost(RemoteError):
    """An established connection dropped (keepalive timeout, reset, server exit)."""

    title = "offline"


class CommandTimeout(RemoteError):
    """A remote command did not finish within its timeout."""

    title = "timeout"
