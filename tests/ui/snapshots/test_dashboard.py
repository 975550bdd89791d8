"""The dashboard and what opens from it without asking an instance: detail, help.

The demo fleet on a fixed clock, frozen by `settle` (every history full, every worker stopped).
Update after an intended visual change:
`.venv/bin/python -m pytest -q tests/ui/snapshots --snapshot-update`.
"""

from __future__ import annotations

from .shots import SIZES, degraded_demo_app, demo_app, settled


@SIZES
def test_dashboard(snap_compare, size) -> None:
    """The training box selected: its GPU, host, job and processes."""
    assert snap_compare(demo_app(), terminal_size=size, run_before=settled)


@SIZES
def test_dashboard_h100x8(snap_compare, size) -> None:
    """The 8-GPU box selected: one row per GPU, 80 columns included."""
    assert snap_compare(demo_app(), terminal_size=size, press=["j", "j"], run_before=settled)


@SIZES
def test_dashboard_gpu_error(snap_compare, size) -> None:
    """nvidia-smi fails on vast-3090-broken: the row says `gpu error`, the panel why."""
    assert snap_compare(demo_app(), terminal_size=size, press=["j", "j", "j", "j"], run_before=settled)


@SIZES
def test_dashboard_auth_failed_and_unknown_key(snap_compare, size) -> None:
    """A refused password (autodl-flaky) and an unknown host key (lab-a100-mig) as rows.

    The row stays selected on the training box: the panel of a failed one prints the login's
    error, which names the loopback port (it changes every run)."""
    app = degraded_demo_app(wrong_password=["autodl-flaky"], unknown_key=["lab-a100-mig"])
    assert snap_compare(app, terminal_size=size, run_before=settled)


@SIZES
def test_detail(snap_compare, size) -> None:
    """`enter` on the 8-GPU box: utilisation and VRAM charts per GPU."""
    assert snap_compare(demo_app(), terminal_size=size, press=["j", "j", "enter"], run_before=settled)


@SIZES
def test_help(snap_compare, size) -> None:
    """`?`: every key; the demo marks add, edit, cost, sync and the power keys `(not here)`."""
    assert snap_compare(demo_app(), terminal_size=size, press=["question_mark"], run_before=settled)
