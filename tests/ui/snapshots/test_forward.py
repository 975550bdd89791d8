"""The forwarded-ports screen (`f`): the presets, the port field and the live forwards, one of
them with the problem the service last reported, in English (80x24, wide) and in Chinese.

Forwards shown are fixed records (a listener that never listens, fixed local ports): a real
forward's local port may be any free one, and the picture must not depend on the machine.
"""

from __future__ import annotations

from asyncssh import SSHClientConnection
from stubhost import StubHost

from gpu_tui.config.language import catalog
from gpu_tui.core import i18n
from gpu_tui.core.errors import ConnectionLost
from gpu_tui.core.i18n import _
from gpu_tui.remote.forwarding import LocalForward, NothingListening
from gpu_tui.services.forwards import Forward, Forwards
from gpu_tui.ui.screens.forward import ForwardScreen

from .shots import EXAMPLE, SIZES, HostApp, steps, wait_for


def _offline() -> SSHClientConnection:
    raise ConnectionLost("never connected")  # nothing connects to these listeners: none listens


def _fixed_forwards() -> Forwards:
    forwards = Forwards()
    for remote, local in ((6006, 6006), (7860, 17860)):
        listener = LocalForward(_offline, EXAMPLE.name, remote, on_failure=lambda exc: None, on_success=lambda: None)
        forwards._forwards[(EXAMPLE.name, remote)] = Forward(EXAMPLE.name, remote, "127.0.0.1", local, listener)
    problem = NothingListening(
        _("{name}: nothing listening on port {port} there ({reason}); start the server on the instance first").format(
            name=EXAMPLE.name, port=7860, reason="Connection refused"
        )
    )
    forwards.of(EXAMPLE.name)[1].problem = problem.line()
    return forwards


def _app() -> HostApp:
    return HostApp(lambda: ForwardScreen(EXAMPLE.name, StubHost(), _fixed_forwards()))


def _listed(app) -> bool:
    return isinstance(app.screen, ForwardScreen) and app.screen.query_one("#forwards").option_count == 2


@SIZES
def test_forward(snap_compare, size) -> None:
    assert snap_compare(_app(), terminal_size=size, run_before=steps(wait_for(_listed, "the forwards listed")))


def test_forward_zh(snap_compare) -> None:
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        assert snap_compare(_app(), terminal_size=(80, 24), run_before=steps(wait_for(_listed, "the forwards listed")))
