"""The conda manager's interpreter line (the path PyCharm's SSH interpreter asks for), its copy
key (OSC 52 through Textual's clipboard) and its mirror key, with Pilot against a real sshd."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilothelp import make_app, state_of
from textual.widgets import DataTable, Log, OptionList, Static
from waiting import wait_for

from gpu_tui.ui.screens.conda import CondaScreen
from gpu_tui.ui.screens.conda_forms import MirrorPicker

pytestmark = pytest.mark.sshd


def interp_line(screen: CondaScreen) -> str:
    return str(screen.query_one("#interp", Static).render())


async def test_interpreter_path_copy_and_mirror(sshd_instance, tmp_path: Path) -> None:
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, sshd_instance.name) == "online")
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, CondaScreen)
        await wait_for(pilot, lambda: not screen.listing and screen.install is not None)
        root = sshd_instance.conda_root()
        await wait_for(pilot, lambda: f"{root}/bin/python" in interp_line(screen))  # base first

        table = screen.query_one("#envs", DataTable)
        table.move_cursor(row=table.get_row_index("llm"))
        wanted = f"{root}/envs/llm/bin/python"
        await wait_for(pilot, lambda: wanted in interp_line(screen))
        assert (root / "envs" / "llm" / "bin" / "python").exists()  # a real interpreter, the one to point at
        await pilot.press("p")
        assert app.clipboard == wanted

        await pilot.press("m")
        picker = app.screen
        assert isinstance(picker, MirrorPicker)
        options = picker.query_one(OptionList)
        options.highlighted = [o.id for o in options.options].index("bfsu")
        await pilot.press("enter")
        assert app.screen is screen
        condarc = sshd_instance.home() / ".condarc"
        bfsu = "mirrors.bfsu.edu.cn/anaconda/pkgs/main"
        await wait_for(pilot, lambda: condarc.exists() and bfsu in condarc.read_text())
        out = screen.query_one("#output", Log)
        await wait_for(pilot, lambda: not screen.mirroring and any("pip.conf" in line for line in out.lines))
        assert out.lines[0] == f"$ gpu-tui conda {sshd_instance.name} mirror bfsu"
        assert "mirrors.bfsu.edu.cn/pypi/web/simple" in (sshd_instance.home() / ".config/pip/pip.conf").read_text()
