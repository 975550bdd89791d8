"""`gpu-tui local`: this machine's GPUs without SSH, and a clear state when there is no nvidia-smi."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from waiting import wait_for

from gpu_tui.ui.factory import build_app, local_source

FAKES = Path(__file__).resolve().parents[1] / "fakes"


def only_view(app):
    assert app.fleet is not None
    (view,) = app.fleet.views.values()
    return view


async def test_local_shows_this_machines_gpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NVSMI_DIR", str(tmp_path))
    (tmp_path / "gpus").write_text("2")
    app = build_app(local_source())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: only_view(app).frame is not None and only_view(app).stats is not None)
        view = only_view(app)
        assert view.shown_state == "online"
        assert [g.name for g in view.frame.gpus] == ["NVIDIA H100 80GB HBM3"] * 2
        text = app.dashboard.gpu_panel.render_view(view, time.time()).plain
        assert "this machine" in text and "H100" in text
        # no SSH here: host-key and reconnect actions are hidden, not merely disabled
        dash = app.dashboard
        assert dash.check_action("trust_key", ()) is False and dash.check_action("reconnect", ()) is False
        assert all(len(line) <= 78 for line in text.splitlines())


async def test_local_without_nvidia_smi_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert not any((Path(d) / "nvidia-smi").exists() for d in ("/usr/bin", "/bin"))
    app = build_app(local_source())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: only_view(app).gpu_error is not None)
        view = only_view(app)
        assert view.shown_state == "gpu error"
        text = app.dashboard.gpu_panel.render_view(view, time.time()).plain
        assert "nvidia-smi" in text and "not found" in text


HOSTILE_SMI = r"""#!/bin/sh
# prints markup and terminal escapes where names go
case "$*" in
  *query-compute-apps*) printf '4242, /opt/[red]evil[/red]/py\033[2Jthon, 100, GPU-1\n' ;;
  *-lms*)
    while :; do
      printf '0, GPU-1, NVIDIA [b]Hostile[/b] \033]0;pwn\007, 50, 1024, 24576, 40, 100.0, 300.0, 30, [N/A]\n'
      sleep 0.2
    done ;;
  *) printf '0, GPU-1, NVIDIA [b]Hostile[/b], 50, 1024, 24576, 40, 100.0, 300.0, 30, [N/A]\n' ;;
esac
"""


async def test_remote_text_is_shown_as_text_not_markup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(HOSTILE_SMI)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    app = build_app(local_source())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: only_view(app).frame is not None and bool(only_view(app).processes))

        def painted() -> str:  # the panels paint a moment after the data arrived
            svg = app.export_screenshot()
            return svg if "[b]Hostile[/b]" in svg and "/opt/[red]evil[/red]/py" in svg else ""

        svg = await wait_for(pilot, painted, what="the GPU name and the process path shown literally")
        assert "[b]Hostile[/b]" in svg  # literally, not as bold
        assert "/opt/[red]evil[/red]/py" in svg
        assert "\x1b" not in svg and "pwn\x07" not in svg
