"""The UI tests speak English whatever the machine's locale: `build_app` resolves the language
from GPU_TUI_LANG, the config and the locale, so each test starts with GPU_TUI_LANG=en (a test
of another language sets its own), and whatever a test switched to, English is in force after."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gpu_tui.config.language import apply_language


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GPU_TUI_LANG", "en")
    try:
        yield
    finally:
        apply_language("en")
