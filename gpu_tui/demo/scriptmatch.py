"""`Template`: recognise a script a service sends by calling the service's own builder.

The builder is called with sentinel arguments (`Template(stats_loop_command(HOLE_S, HOLE_N),
HOLE_S, HOLE_N)`); what it returns, with each sentinel a hole, is matched against the command
line that arrives. A change inside a service's script changes the template with it, so the
demo answers the new script without a change here; only the parameters are read.
"""

from __future__ import annotations

import re

__all__ = ["Template", "HOLE_S", "HOLE_N", "HOLE_W"]

HOLE_S = 0.987654
"""A sentinel for a number of seconds (prints as `0.987654` in `:g` and str forms)."""
HOLE_N = 98765
"""A sentinel for a whole number."""
HOLE_W = "GPUTUIHOLE"
"""A sentinel for a word (a name, a path: a shell word, quoted or not)."""


class Template:
    def __init__(self, text: str, *holes: object) -> None:
        marks = [str(h) for h in holes]
        parts = re.split("(" + "|".join(map(re.escape, marks)) + ")", text) if marks else [text]
        self.holes = parts[1::2]
        self._re = re.compile("".join(re.escape(p) if i % 2 == 0 else "(.+?)" for i, p in enumerate(parts)), re.DOTALL)

    def match(self, command: str) -> list[str] | None:
        """The holes' values in the order they occur in the template, or None."""
        m = self._re.fullmatch(command)
        return list(m.groups()) if m else None
