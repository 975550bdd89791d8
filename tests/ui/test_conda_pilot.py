"""The conda manager (`e`) and the env picker of the check screen (`c`), driven with Pilot
against a real sshd whose HOME holds a fake miniconda off PATH."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilothelp import make_app, state_of
from sshhelp import conda_processes
from textual.widgets import Checkbox, DataTable, Input, Log, Select, Static
from waiting import wait_for

from gpu_tui.ui.screens.conda import CondaScreen
from gpu_tui.ui.screens.conda_forms import CondaForm
from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.env_check import DEFAULT_ENV, EnvCheckScreen

pytestmark = pytest.mark.sshd


def rows(screen: CondaScreen) -> dict[str, list[str]]:
    table = screen.query_one("#envs", DataTable)
    return {str(key.value): [str(c) for c in table.get_row(key)] for key in table.rows}


def output(screen: CondaScreen) -> str:
    return "\n".join(screen.query_one("#output", Log).lines)


async def select_env(pilot, screen: CondaScreen, env: str) -> None:
    table = screen.query_one("#envs", DataTable)
    table.move_cursor(row=table.get_row_index(env))
    await pilot.pause()


async def open_conda(pilot, app, name: str) -> CondaScreen:
    await wait_for(pilot, lambda: state_of(app, name) == "online")
    await pilot.press("e")
    screen = app.screen
    assert isinstance(screen, CondaScreen)
    await wait_for(pilot, lambda: not screen.listing and all(r[2] != "…" for r in rows(screen).values()))
    return screen


async def test_list_create_install_remove(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_conda_delay(1.0)
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conda(pilot, app, sshd_instance.name)
        listed = rows(screen)
        assert set(listed) == {"base", "llm", "py311"}
        assert listed["py311"][1].startswith("3.11.") and listed["base"][3] == str(sshd_instance.conda_root())
        assert all(r[2].endswith("iB") for r in listed.values())
        assert app.screen.check_action("remove", ()) is None  # base is selected first: not removable

        # create, with a refusal shown in the form first
        await pilot.press("n")
        form = app.screen
        assert isinstance(form, CondaForm)
        form.query_one("#name", Input).value = "bad name; rm -rf ~"
        await pilot.click("#ok")
        assert isinstance(app.screen, CondaForm)
        assert "conda env name" in str(form.query_one("#error", Static).render())
        form.query_one("#name", Input).value = "exp"
        form.query_one("#python", Input).value = "3.10"
        # a button ignores clicks for 0.2 s
        await wait_for(pilot, lambda: not form.query_one("#ok").has_class("-active"))
        await pilot.click("#ok")
        assert app.screen is screen
        assert screen.check_action("cancel", ()) is True and screen.check_action("create", ()) is None
        await wait_for(
            pilot, lambda: "Preparing transaction" in output(screen) or "done" in output(screen).splitlines()[-1:]
        )
        # the fake's envs link a real interpreter, so its version is whatever runs the tests
        await wait_for(pilot, lambda: "exp" in rows(screen) and rows(screen)["exp"][1].startswith("3."))
        assert output(screen).splitlines()[0] == "$ conda create -n exp python=3.10"
        assert "done" in output(screen).splitlines()
        assert "exp" in sshd_instance.conda_envs()

        # install with pip into it
        await select_env(pilot, screen, "exp")
        await pilot.press("i")
        form = app.screen
        assert isinstance(form, CondaForm)
        form.query_one("#packages", Input).value = "einops"
        # conda, not pip: the fake env's pip is the system python's, and tests stay offline
        assert form.query_one("#flag", Checkbox).value is False
        await pilot.click("#ok")
        await wait_for(pilot, lambda: output(screen).splitlines()[-1:] == ["done"] and screen.proc is None)
        assert "$ conda install -n exp einops" in output(screen)
        assert "einops" in sshd_instance.conda_packages("exp")

        # remove asks first; "no" keeps it
        await wait_for(pilot, lambda: not screen.listing)
        await select_env(pilot, screen, "exp")
        await pilot.press("d")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert "exp" in sshd_instance.conda_envs()
        await pilot.press("d")
        await pilot.press("y")
        await wait_for(pilot, lambda: "exp" not in rows(screen) and screen.proc is None and not screen.listing)
        assert "exp" not in sshd_instance.conda_envs()


async def test_cancel_kills_conda_and_leaving_asks(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_conda_delay(60)
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_conda(pilot, app, sshd_instance.name)
        await pilot.press("n")
        form = app.screen
        form.query_one("#name", Input).value = "slow"
        await pilot.click("#ok")
        await wait_for(pilot, lambda: "environment location" in output(screen))
        # escape while it runs asks; "no" stays
        await pilot.press("escape")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert app.screen is screen and screen.proc is not None
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.proc is None)
        assert output(screen).splitlines()[-1] == "cancelled"
        assert "slow" not in sshd_instance.conda_envs()

        # leaving with one running cancels it there too
        await pilot.press("n")
        app.screen.query_one("#name", Input).value = "slow2"
        await pilot.click("#ok")
        await wait_for(pilot, lambda: "environment location" in output(screen))
        await pilot.press("escape")
        await pilot.press("y")
        assert not isinstance(app.screen, CondaScreen)
        await wait_for(pilot, lambda: conda_processes("slow2") == [])
        assert "slow2" not in sshd_instance.conda_envs()


async def test_check_env_picker(sshd_instance, tmp_path: Path) -> None:
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 40)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        await pilot.press("c")
        check = app.screen
        assert isinstance(check, EnvCheckScreen)
        select = check.query_one("#env", Select)
        await wait_for(pilot, lambda: len(select._options) > 1)
        assert select.value == DEFAULT_ENV
        await wait_for(pilot, lambda: "to fix" in str(check.query_one("#checks", Static).render()), timeout=30)
        select.value = "py311"
        await wait_for(
            pilot,
            lambda: (
                "conda env py311" in str(check.query_one("#checks", Static).render())
                and "to fix" in str(check.query_one("#checks", Static).render())
            ),
            timeout=30,
        )
        text = str(check.query_one("#checks", Static).render())
        assert "torch" in text
        await pilot.press("escape")

        # `c` on a row of the conda screen checks that env
        screen = await open_conda(pilot, app, name)
        await select_env(pilot, screen, "llm")
        await pilot.press("c")
        check = app.screen
        assert isinstance(check, EnvCheckScreen) and check.env == "llm"
        await wait_for(pilot, lambda: "conda env llm" in str(check.query_one("#checks", Static).render()), timeout=30)
