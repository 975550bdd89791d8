"""The compact form layout every modal form shares: one row per field, borderless inputs, so a
form fits an 80x24 terminal (people run gpu-tui over plain SSH)."""

from __future__ import annotations

from rich.cells import cell_len
from textual.dom import DOMNode
from textual.widgets import Label

__all__ = ["compact_form_css", "fit_labels"]


def compact_form_css(
    screen: str, *, container: str = "VerticalScroll", width: int = 80, label_width: int = 10, row_gap: int = 1
) -> str:
    """CSS for modal `screen` whose form sits in a `container` with `.row` (Label + Input or
    Select), Checkboxes, an `#error` Static and a `.buttons` row."""
    s = screen
    return f"""
    {s} {{ align: center middle; }}
    {s} > {container} {{ width: {width}; max-width: 100%; height: auto; max-height: 100%;
        border: thick $primary; background: $surface; padding: 0 1; }}
    {s} .row {{ height: 1; margin-top: {row_gap}; }}
    {s} .row > Label {{ width: {label_width}; }}
    {s} Input, {s} Input:focus {{ border: none; height: 1; width: 1fr; padding: 0 1; }}
    {s} Input:focus {{ background: $boost; }}
    {s} Select {{ width: 1fr; }}
    {s} SelectCurrent {{ border: none; height: 1; padding: 0 1; }}
    {s} Checkbox {{ border: none; height: 1; margin-top: 1; padding: 0; }}
    {s} #error {{ color: $error; height: auto; margin-top: {row_gap}; }}
    {s} .buttons {{ height: 3; margin-top: {row_gap}; }}
    {s} Button {{ margin-right: 2; }}
    {s} .hint {{ color: $text-muted; }}
    """


def fit_labels(form: DOMNode) -> None:
    """Widen the label column of `form`'s `.row`s to its longest label and a space, in terminal
    cells (a Chinese character is two), where the CSS width is too narrow; call it on mount."""
    labels = list(form.query(".row > Label").results(Label))
    need = max((cell_len(str(label.content)) + 1 for label in labels), default=0)
    for label in labels:
        width = label.styles.width
        if width is None or not width.is_cells or width.value < need:
            label.styles.width = need
