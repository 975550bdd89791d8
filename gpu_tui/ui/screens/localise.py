"""What the screens need to speak the language in force: footer labels, styled sentences, cell-width padding.

A Binding's description is fixed when its class is created (at import, before the language is
chosen): the screens mark theirs with `N_` and call `translate_bindings(self)` when built. A
translated sentence keeps its words in the translator's order, so a value that is styled apart
(a name in bold cyan) is a `{placeholder}` that `styled` fills, not a piece glued on in English
order. Widths are terminal cells (a Chinese character is two), never `len()`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from rich.cells import cell_len
from rich.text import Text
from textual.binding import BindingsMap
from textual.dom import DOMNode

from gpu_tui.core.i18n import N_, _

__all__ = ["JOB_STATES", "pad", "styled", "translate_bindings"]

JOB_STATES = (N_("running"), N_("succeeded"), N_("failed"), N_("stopped"))
"""The job state words of CONTRACTS.md, for the catalog; code compares the English ones and
shows `_(state)`."""

_FIELD = re.compile(r"\{(\w+)\}")


def translate_bindings(node: DOMNode) -> None:
    """Replace `node`'s bindings by the same ones with translated descriptions (the footer's
    and the command palette's words). Call it right after `super().__init__()`: a `[keys]`
    remap is applied later, to these."""
    keys = {
        key: [replace(b, description=_(b.description)) if b.description else b for b in bindings]
        for key, bindings in node._bindings.key_to_bindings.items()
    }
    node._bindings = BindingsMap.from_keys(keys)


def styled(template: str, style: str = "", **values: str | tuple[str, str]) -> Text:
    """`template` (already translated) as Text in `style`, each `{name}` replaced by its value,
    a `(text, style)` pair keeping its own style. Values are data: never read as markup."""
    out = Text(style=style)
    at = 0
    for m in _FIELD.finditer(template):
        out.append(template[at : m.start()])
        value = values[m.group(1)]
        if isinstance(value, tuple):
            out.append(value[0], style=value[1])
        else:
            out.append(value)
        at = m.end()
    out.append(template[at:])
    return out


def pad(text: str, width: int) -> str:
    """`text` padded with spaces to `width` terminal cells (left aligned)."""
    return text + " " * max(0, width - cell_len(text))
