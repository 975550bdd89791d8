"""One action table (core/actions.py) drives the dashboard's bindings, `[keys]` validation, help,
palette and footer; these tests tie them so an action cannot be added to one and not the rest.

The demo fleet runs in-process (asyncssh servers on loopback): no sshd, no root.
"""

from __future__ import annotations

import pytest
from waiting import wait_for

from gpu_tui.config.settings import parse_settings
from gpu_tui.core.actions import ACTION_IDS, ACTIONS, key_label
from gpu_tui.core.errors import ConfigError
from gpu_tui.ui.dashboard import AVAILABLE, DashboardScreen
from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.screens import HelpScreen


def test_ids_are_unique_and_every_one_has_a_binding_a_check_and_a_method() -> None:
    assert len(set(ACTION_IDS)) == len(ACTION_IDS) == len(ACTIONS)
    bound = {b.id: b for b in DashboardScreen.BINDINGS if getattr(b, "id", None)}
    assert list(bound) == list(ACTION_IDS)
    for a in ACTIONS:
        assert bound[a.id].key == a.key and bound[a.id].action == a.id and bound[a.id].description == a.label
        assert callable(getattr(DashboardScreen, f"action_{a.id}", None)), a.id
    assert set(AVAILABLE) == set(ACTION_IDS)


def test_keys_table_accepts_every_action_id_and_refuses_others() -> None:
    text = "[keys]\n" + "".join(f'{i} = "f{n + 1}"\n' for n, i in enumerate(ACTION_IDS))
    assert dict(parse_settings(text).keys) == {i: f"f{n + 1}" for n, i in enumerate(ACTION_IDS)}
    with pytest.raises(ConfigError, match="unknown action id 'shutdwn'"):
        parse_settings('[keys]\nshutdwn = "f1"\n')


def test_key_labels_read_as_typed() -> None:
    assert key_label("question_mark") == "?" and key_label("dollar_sign") == "$" and key_label("S") == "S"


async def test_help_palette_and_footer_follow_the_table_and_the_remap() -> None:
    app = build_app(demo_source(instances=2), parse_settings('[keys]\nhelp = "f1"\nlogs = "L"\n'))
    async with app.run_test(size=(100, 30)) as pilot:
        dash = app.dashboard
        await wait_for(pilot, lambda: dash.selected() is not None and dash.selected().state == "online")  # type: ignore[union-attr]
        rows = dash.help_rows()
        by_id = {r[1]: r for r in rows if r[1]}
        assert list(by_id) == list(ACTION_IDS)
        assert by_id["help"][0] == "f1" and by_id["logs"][0] == "L"
        # the demo's instances are not ours to power off or edit: said in help, absent elsewhere
        assert by_id["shutdown"][2].endswith("(not here)") and by_id["add"][2].endswith("(not here)")
        palette = {c.help.rsplit("action ", 1)[1]: c for c in dash.palette_commands()}
        assert "shutdown" not in palette and "add" not in palette and "quit" not in palette
        assert {i for i in ACTION_IDS if dash.check_action(i, ()) is True} - {"quit"} == set(palette)
        assert palette["help"].help.startswith("key f1 ")
        footer_actions = {b.binding.action for b in app.active_bindings.values()}  # what the footer shows
        assert "shutdown" not in footer_actions and {"run_job", "logs", "conda"} <= footer_actions
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is dash
