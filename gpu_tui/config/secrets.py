"""Instance passwords: the OS keyring (service `gpu-tui`), an env-var fallback, an in-memory cache.

keyring can raise on headless Linux (no backend) or block on a locked collection's GUI prompt,
so every keyring call runs in a daemon thread with a timeout and never prompts. Passwords are
`SecretStr` end to end; this module never logs them.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import TypeVar

from pydantic import SecretStr

from gpu_tui.core.errors import SecretError

__all__ = ["KEYRING_SERVICE", "SecretStore", "env_var_name"]

KEYRING_SERVICE = "gpu-tui"
log = logging.getLogger(__name__)
T = TypeVar("T")


def env_var_name(instance_name: str) -> str:
    """`GPU_TUI_PASSWORD_<NAME>`: upper-cased, every character but A-Z 0-9 turned into `_`."""
    return "GPU_TUI_PASSWORD_" + re.sub(r"[^A-Z0-9]", "_", instance_name.upper())


class _Timeout(Exception):
    pass


def _call_with_timeout(fn: Callable[[], T], timeout: float) -> T:
    # a daemon thread, not an executor: a keyring blocked on a GUI prompt must not stop exit
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    thread = threading.Thread(target=target, name="gpu-tui-keyring", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise _Timeout()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


class SecretStore:
    """Look up and store passwords; the env var wins so headless and scripted use never waits."""

    def __init__(self, *, environ: Mapping[str, str] | None = None, timeout: float = 5.0) -> None:
        self._environ = os.environ if environ is None else environ
        self._timeout = timeout
        self._memory: dict[str, SecretStr] = {}
        self.keyring_problem: str | None = None
        """Why the keyring could not be used, once a call found out (shown to the user)."""

    def remember(self, name: str, password: SecretStr) -> None:
        """Hold a password typed in this session, in memory only."""
        self._memory[name] = password

    def remembered(self, name: str) -> SecretStr | None:
        """A password typed in this session (memory only; never blocks)."""
        return self._memory.get(name)

    def get_password(self, name: str) -> SecretStr | None:
        """The instance's password, or None when none is stored anywhere."""
        if name in self._memory:
            return self._memory[name]
        env = self._environ.get(env_var_name(name))
        if env:
            return SecretStr(env)
        value = self._keyring(lambda kr: kr.get_password(KEYRING_SERVICE, name), default=None)
        return SecretStr(value) if value else None

    def set_password(self, name: str, password: SecretStr) -> None:
        """Store in the keyring; raise SecretError (with what to do instead) when there is none."""
        self._memory[name] = password
        ok = self._keyring(
            lambda kr: kr.set_password(KEYRING_SERVICE, name, password.get_secret_value()) or True,
            default=False,
        )
        if not ok:
            raise SecretError(
                f"cannot store the password for {name!r}: {self.keyring_problem}. "
                f"Set {env_var_name(name)} in the environment instead."
            )

    def delete_password(self, name: str) -> None:
        """Forget the password everywhere we keep it; a missing entry is not an error."""
        self._memory.pop(name, None)

        def delete(kr: object) -> bool:
            import keyring.errors

            try:
                kr.delete_password(KEYRING_SERVICE, name)  # type: ignore[attr-defined]
            except keyring.errors.PasswordDeleteError:
                pass
            return True

        self._keyring(delete, default=False)

    def _keyring(self, op: Callable[[object], T], default: T) -> T:
        if self.keyring_problem is not None:
            return default

        def call() -> T:
            import keyring  # imported lazily: backend discovery is slow

            return op(keyring)

        try:
            return _call_with_timeout(call, self._timeout)
        except _Timeout:
            self.keyring_problem = f"the keyring did not answer within {self._timeout:g} s (locked?)"
        except Exception as exc:  # keyring backends raise many types; all mean "unusable"
            self.keyring_problem = f"no usable keyring ({type(exc).__name__})"
        log.warning("keyring unavailable: %s", self.keyring_problem)
        return default
