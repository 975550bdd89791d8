"""What every subcommand prints the same way: error lines and yes/no questions, in the
language in force."""

from __future__ import annotations

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable

__all__ = ["YES_WORDS", "confirm", "error_line", "is_yes", "yes_no_suffix"]

YES_WORDS = ("y", "yes", "是", "好", "是的", "好的")
"""Answers that mean yes, in either language: the keys stay y/n, Chinese readers may type 是 or 好."""


def error_line(exc: GpuTuiError) -> str:
    """`title: message` with the title translated (titles are English class attributes marked
    for the catalog); printable, as an instance's words may be in the message."""
    title = _(exc.title) if exc.title else exc.title
    return printable(f"{title}: {exc.message}")


def is_yes(answer: str) -> bool:
    return answer.strip().lower() in YES_WORDS


def yes_no_suffix(default: bool) -> str:
    """`[Y/n]`, `[y/N]` in every language (the capital is what Enter means); the keys stay y/n,
    and 是 / 好 are taken as yes too."""
    return "[Y/n]" if default else "[y/N]"


def confirm(question: str) -> bool:
    """Ask `question` on the terminal (the caller has checked there is one); default no."""
    return is_yes(input(f"{question} {yes_no_suffix(False)} "))
