"""--help laid out in terminal cells: argparse wraps with `len()` and breaks only at spaces,
so a Chinese sentence (two cells a character, few spaces) overflows the terminal. English text
is left to argparse as it was, byte for byte."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable

from gpu_tui.commands.support.cells import cell_len, wrap
from gpu_tui.core.i18n import _

__all__ = ["CellHelpFormatter", "CellRawDescriptionHelpFormatter"]

_USAGE_PART = re.compile(r"\[[^\]]*\](?:\.\.\.)?|-- \S+|\S+")
"""The pieces a usage line may be broken between: `[--env ENV]`, `[--setenv K=V]...`, `-- CMD...`, `NAME`."""


class CellHelpFormatter(argparse.HelpFormatter):
    """Wraps help and descriptions by cells, breaking between Chinese characters too."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        if text.isascii():
            return super()._split_lines(text, width)
        return wrap(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.isascii():
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in wrap(text, max(11, width - cell_len(indent))))

    def _format_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[argparse._MutuallyExclusiveGroup],
        prefix: str | None,
    ) -> str:
        shown = _("usage: ") if prefix is None else prefix
        if usage is not None:
            return self._given_usage(usage % {"prog": self._prog}, shown)
        # argparse indents the usage's continuation lines under the program name by len(prefix);
        # `用法: ` is wider than it is long
        text = super()._format_usage(usage, actions, groups, prefix)
        extra = cell_len(shown) - len(shown)
        if extra <= 0:
            return text
        head, *rest = text.split("\n")
        return "\n".join([head, *(" " * extra + line if line.startswith(" ") else line for line in rest)])

    def _given_usage(self, usage: str, shown: str) -> str:
        """A usage written by hand (`run.usage = ...`), which argparse never wraps: broken before
        an option that would pass the terminal's width, continued under the program name."""
        prog = self._prog + " " if usage.startswith(self._prog + " ") else ""
        if cell_len(shown + usage) <= self._width or not prog:
            return f"{shown}{usage}\n\n"
        indent = " " * cell_len(shown + prog)
        lines = [shown + prog.rstrip()]
        for part in _USAGE_PART.findall(usage[len(prog) :]):
            if cell_len(lines[-1]) + 1 + cell_len(part) <= self._width or lines[-1] == indent:
                lines[-1] += " " + part if lines[-1] != indent else part
            else:
                lines.append(indent + part)
        return "\n".join(lines) + "\n\n"


class CellRawDescriptionHelpFormatter(CellHelpFormatter):
    """Descriptions and epilogs kept as written (their translations are wrapped by hand, to
    fit 80 cells); option help still wrapped by cells."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "".join(indent + line for line in text.splitlines(keepends=True))
