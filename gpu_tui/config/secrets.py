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
from typing import Protocol, TypeVar

from pydantic import SecretStr

from gpu_tui.core.errors import SecretError
from gpu_tui.core.i18n import _

__all__ = ["KEYRING_SERVICE", "SecretStore", "env_var_name"]

KEYRING_SERVICE = "gpu-tui"
log = logging.getLogger(__name__)
T = TypeVar("T")


def env_var_name(instance_name: str) -> str:
    """`GPU_TUI_PASSWORD_<NAME>`: upper-cased, every character but A-Z 0-9 turned into `_`."""
    return "GPU_TUI_PASSWORD_" + re.sub(r"[^A-Z0-9]", "_", instance_name.upper())


class _Timeout(Exception):
    pass


class _Keyring(Protocol):
    """What this module uses of the `keyring` module (passed to the operations as `kr`)."""

    def get_password(self, service_name: str, username: str, /) -> str | None: ...
    def set_password(self, service_name: str, username: str, password: str, /) -> None: ...
    def delete_password(self, service_name: str, username: str, /) -> None: ...


def _call_with_timeout(fn: Callable[[], T], timeout: float) -> T:
    # a daemon thread, not an executor: a keyring blocked on a GUI prompt must not stop exit
    value: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            value.append(fn())
        except BaseException as exc:  # handed to the caller below
            error.append(exc)

    thread = threading.Thread(target=target, name="gpu-tui-keyring", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise _Timeout()
    if error:
        raise error[0]
    return value[0]


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

        def store(kr: _Keyring) -> bool:
            kr.set_password(KEYRING_SERVICE, name, password.get_secret_value())
            return True

        ok = self._keyring(store, default=False)
        if not ok:
            raise SecretError(
                _(
                    "cannot store the password for {name!r}: {problem}. Set {variable} in the environment instead."
                ).format(name=name, problem=self.keyring_problem, variable=env_var_name(name))
            )

    def delete_password(self, name: str) -> None:
        """Forget the password everywhere we keep it; a missing entry is not an error."""
        self._memory.pop(name, None)

        def delete(kr: _Keyring) -> bool:
            import keyring.errors

            try:
                kr.delete_password(KEYRING_SERVICE, name)
            except keyring.errors.PasswordDeleteError:
                pass
            return True

        self._keyring(delete, default=False)

    def _keyring(self, op: Callable[[_Keyring], T], default: T) -> T:
        if self.keyring_problem is not None:
            return default

        def call() -> T:
            import keyring  # imported lazily: backend discovery is slow

            return op(keyring)

        try:
            return _call_with_timeout(call, self._timeout)
        except _Timeout:
            log.warning("keyring unavailable: the keyring did not answer within %g s (locked?)", self._timeout)
            self.keyring_problem = _("the keyring did not answer within {seconds:g} s (locked?)").format(
                seconds=self._timeout
            )
        except Exception as exc:  # keyring backends raise many types; all mean "unusable"
            log.warning("keyring unavailable: no usable keyring (%s)", type(exc).__name__)
            self.keyring_problem = _("no usable keyring ({error})").format(error=type(exc).__name__)
        return default
