"""What the screens need to speak the language in force: footer labels, styled sentences, cell-width padding.

A Binding's description is fixed when its class is created (at import, before the language is
chosen): the screens mark theirs with `N_` and call `translate_bindings(self)` when built. A
translated sentence keeps its words in the translator's order, so a value that is styled apart
(a name in bold cyan) is a `{placeholder}` that `styled` fills, not a piece glued on in English
order. Widths are terminal cells (a Chinese character is two), never `len()`.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

from gpu_tui.core.i18n import N_
from gpu_tui.ui.bindings import translate_bindings
from gpu_tui.ui.format import text_parts

__all__ = ["JOB_STATES", "pad", "styled", "translate_bindings"]

JOB_STATES = (N_("pending"), N_("running"), N_("succeeded"), N_("failed"), N_("stopped"))
"""The job state words of CONTRACTS.md, for the catalog; code compares the English ones and
shows `_(state)`."""


def styled(template: str, style: str = "", **values: str | tuple[str, str]) -> Text:
    """`template` (already translated) as Text in `style`, each `{name}` replaced by its value,
    a `(text, style)` pair keeping its own style. Values are data: never read as markup."""
    return Text.assemble(*text_parts(template, **values), style=style)


def pad(text: str, width: int) -> str:
    """`text` padded with spaces to `width` terminal cells (left aligned)."""
    return text + " " * max(0, width - cell_len(text))
