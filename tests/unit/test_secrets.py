"""Secrets: env fallback, missing keyring backend never hangs, nothing leaks into the log."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from gpu_tui.config.logsetup import redact, setup_logging
from gpu_tui.config.secrets import SecretStore, env_var_name
from gpu_tui.core.errors import SecretError


def test_env_var_name() -> None:
    assert env_var_name("autodl-4090") == "GPU_TUI_PASSWORD_AUTODL_4090"
    assert env_var_name("lab.box_2") == "GPU_TUI_PASSWORD_LAB_BOX_2"


def test_env_fallback_and_memory() -> None:
    store = SecretStore(environ={"GPU_TUI_PASSWORD_A": "pw-from-env"})
    got = store.get_password("a")
    assert isinstance(got, SecretStr) and got.get_secret_value() == "pw-from-env"
    assert "pw-from-env" not in repr(got)
    store.remember("b", SecretStr("typed"))
    assert store.get_password("b").get_secret_value() == "typed"  # type: ignore[union-attr]


def test_no_keyring_backend_is_quick_and_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    import keyring.core

    keyring.core.set_keyring(keyring.core.load_keyring("keyring.backends.fail.Keyring"))
    store = SecretStore(environ={})
    t0 = time.monotonic()
    assert store.get_password("x") is None
    assert time.monotonic() - t0 < 5
    assert store.keyring_problem and "keyring" in store.keyring_problem
    with pytest.raises(SecretError, match="GPU_TUI_PASSWORD_X"):
        store.set_password("x", SecretStr("s3cret-value"))


def test_log_redacts_registered_secrets(tmp_path: Path) -> None:
    log_file = tmp_path / "log" / "gpu-tui.log"
    setup_logging(log_file, debug=True)
    redact("hunter2-very-secret")
    logging.getLogger("gpu_tui.test").info("login with %s failed", "hunter2-very-secret")
    for h in logging.getLogger().handlers:
        h.flush()
    text = log_file.read_text()
    assert "failed" in text and "hunter2-very-secret" not in text
