"""The conda manager (`e`) on the demo's training box, and what opens from it: the new-env and
install forms and the remove confirmation. The env list (python, size) comes from the instance:
the test waits for every cell, then `settle` freezes the app."""

from __future__ import annotations

from textual.app import App
from textual.widgets import DataTable, Input, Static

from gpu_tui.ui.screens.conda import CondaScreen
from gpu_tui.ui.screens.conda_forms import CondaForm

from .shots import SIZES, demo_app, online, settled, steps, text_of, wait_for


def _envs_listed(app: App[object]) -> bool:
    """conda found, every env's python and size filled in, the list no longer loading."""
    screen = app.screen
    if not isinstance(screen, CondaScreen) or screen.listing or screen.install is None:
        return False
    table = screen.query_one("#envs", DataTable)
    cells = [str(c) for i in range(table.row_count) for c in table.get_row_at(i)]
    return table.row_count > 0 and "…" not in cells and "miniconda3" in text_of(screen.query_one("#title", Static))


CONDA = steps(online(), "e", wait_for(_envs_listed, "the conda envs"), settled)


def _form_focused(app: App[object]) -> bool:
    """The form is up and its first field has the cursor: a screen focuses its first widget after
    it is shown, a moment later than the key that opened it (later still on a loaded machine)."""
    return isinstance(app.screen, CondaForm) and isinstance(app.focused, Input)


async def _steady_cursor(pilot) -> None:
    """`settled` stopped the blinking of the fields there were; the form's are new. A blinking
    cursor is drawn or not by the clock (a loaded machine took the picture in the off phase)."""
    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False
    await pilot.pause()


def _form(key: str):
    return steps(CONDA, key, wait_for(_form_focused, "the form's first field focused"), _steady_cursor)


@SIZES
def test_conda_manager(snap_compare, size) -> None:
    """`e`: base, llm and py311 with their python and size, and the keys for them."""
    assert snap_compare(demo_app(), terminal_size=size, run_before=CONDA)


@SIZES
def test_conda_create_form(snap_compare, size) -> None:
    """`n`: a new env's name and python."""
    assert snap_compare(demo_app(), terminal_size=size, run_before=_form("n"))


@SIZES
def test_conda_install_form(snap_compare, size) -> None:
    """`i` on base: packages, with conda or the env's pip."""
    assert snap_compare(demo_app(), terminal_size=size, run_before=_form("i"))


@SIZES
def test_conda_remove_confirm(snap_compare, size) -> None:
    """`d` on llm (base cannot be removed): asks first, naming the prefix it deletes."""
    assert snap_compare(demo_app(), terminal_size=size, press=["down", "d"], run_before=CONDA)
