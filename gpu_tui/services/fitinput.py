"""What the user typed for `fit` (the CLI and the dashboard's Fit screen): MODEL as a size, a
known name or a config.json on this machine, and the whole-number options."""

from __future__ import annotations

from pathlib import Path

from gpu_tui.core.errors import InputError
from gpu_tui.core.fit.estimate import ModelSpec, spec_from_config, spec_from_name
from gpu_tui.core.i18n import _

__all__ = ["parse_positive", "resolve_model"]


def parse_positive(text: str, option: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1 or n > 10_000_000:
        raise InputError(
            _("{option} wants a whole number from 1 to 10000000, got {text!r}").format(option=option, text=text)
        )
    return n


def resolve_model(text: str) -> ModelSpec:
    """MODEL: a config.json (or a model folder holding one), else a size or a known name."""
    # a Hub id (`Qwen/Qwen2.5-7B-Instruct`) has a slash too: it is a path only if it exists
    path = Path(text).expanduser()
    if path.is_dir():
        path = path / "config.json"
    elif not (path.exists() or text.endswith(".json")):
        return spec_from_name(text)
    try:
        data = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(
            _("cannot read {path} ({why}): give the path of a model's config.json").format(path=path, why=why)
        ) from None
    return spec_from_config(data, str(path))
