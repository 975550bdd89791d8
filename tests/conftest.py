"""Shared fixtures. The sshd tier: real OpenSSH sshd processes on loopback (tests/sshd.py).

Fixtures (tests using any of them are marked ``sshd`` automatically):

- ``sshd_session`` (session): ``sshd.SshdSession``: ``.root``, ``.client_key``, ``.password_user``.
- ``sshd_root`` (session): ``Path`` of the session root dir (0755, under /tmp, removed at the end;
  keep it with GPU_TUI_KEEP_SSHD_DIRS=1).
- ``client_key`` (session): ``sshd.ClientKey`` (``path``, ``public_path``, ``key``, ``public_line``),
  authorised for root on every instance.
- ``password_user`` (session): ``sshd.PasswordUser`` (``name`` "gputui-pw", ``password`` random
  per test session, ``uid``, ``gid``, ``home``).
- ``sshd_factory`` (function): ``make(name="gpu", *, capture=None, gpus=None, mode="ok",
  start=True, **SshdInstance kwargs) -> SshdInstance`` (started). Everything it made is killed at
  teardown, pass or fail, together with whatever the sessions started.
- ``sshd_instance`` (function): one started instance (H100 capture, 1 GPU).
- ``sshd_fleet`` (function): three started instances: H100 x1, L40S x8, RTX 4080 SUPER x1.

Not root: the tests marked ``sshd`` (by those fixtures, or by hand) SKIP, saying they need root,
and the rest of the suite runs as any user. As root (CI) they run, and an sshd that cannot
start is a failure, never a skip.

No root, no sshd:

- ``inproc_fleet`` (function, async): ``await start(*profiles, **start_fleet kwargs) -> DemoFleet``:
  in-process SSH servers on loopback (gpu_tui.demo's simulation; default: one ``steady`` 50 %
  instance, see tests/pilothelp.py), closed at teardown. ``pilothelp.inproc_app`` puts a
  config-file dashboard on one.
- ``inproc_commands`` (function): the (instance, command) exec requests those servers answered.

Helpers for tests (importable from any test: tests/ is on sys.path): ``waiting`` (the one
polling helper: ``until``, ``until_sync``, ``wait_for(pilot, ...)``), ``pilothelp`` (dashboards
on sshd or in-process hosts, ``state_of``, ``panel_text``, ``screen_text``), ``sshhelp``
(gpu-tui's SshHost, config and CLI environment for an sshd instance), ``demohelp``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

import sshd as sshd_lib  # noqa: E402  (tests/sshd.py)

SSHD_FIXTURES = {
    "sshd_session",
    "sshd_root",
    "client_key",
    "password_user",
    "sshd_factory",
    "sshd_instance",
    "sshd_fleet",
}

FLEET = (
    ("h100", "h100-80gb", None),
    ("l40s", "l40s", 8),
    ("rtx4080", "4080-super", None),
)

# pytest-xdist workers per CPU for `-n auto` (pyproject's addopts). Most tests wait on sshd,
# subprocesses and timers: on the 2-core CI machine, quiet, the whole suite took 7:52 with 2
# workers and 5:14 with 4 (1.6 cores busy); 6 were no faster and two timing-bound tests failed.
WORKERS_PER_CPU = 2

NEEDS_ROOT = "needs root: starts OpenSSH sshd processes on loopback (tests/sshd.py); run as root, as CI does"

_session: sshd_lib.SshdSession | None = None


def pytest_xdist_auto_num_workers(config):
    """The worker count `-n auto` means. Serial (0: no workers, no start-up) when the command
    line names only test files or node ids, such as tests/unit/test_x.py::test_y: starting
    workers costs seconds. Else WORKERS_PER_CPU per CPU this process may use.
    PYTEST_XDIST_AUTO_NUM_WORKERS=N, or -n N, decides instead."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    here = config.invocation_params.dir
    if config.args and all((here / arg.split("::")[0]).is_file() for arg in config.args):
        return 0
    return WORKERS_PER_CPU * len(os.sched_getaffinity(0))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    not_root = os.geteuid() != 0
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if SSHD_FIXTURES.intersection(fixtures):
            item.add_marker(pytest.mark.sshd)
        if "slurm_cluster" in fixtures:  # one cluster per machine: one worker runs them all
            item.add_marker(pytest.mark.slurm)
            item.add_marker(pytest.mark.xdist_group("slurm"))
        if not_root and item.get_closest_marker("sshd") is not None:
            item.add_marker(pytest.mark.skip(reason=NEEDS_ROOT))


@pytest.fixture(scope="session")
def sshd_session():
    global _session
    session = sshd_lib.SshdSession()  # raises SshdError (a failure, not a skip) if it cannot run
    _session = session
    try:
        yield session
    finally:
        session.cleanup()
        _session = None


@pytest.fixture(scope="session")
def sshd_root(sshd_session) -> Path:
    return sshd_session.root


@pytest.fixture(scope="session")
def client_key(sshd_session) -> sshd_lib.ClientKey:
    return sshd_session.client_key


@pytest.fixture(scope="session")
def password_user(sshd_session) -> sshd_lib.PasswordUser:
    return sshd_session.password_user


@pytest.fixture
def sshd_factory(sshd_session):
    made: list[sshd_lib.SshdInstance] = []

    def make(name: str = "gpu", *, capture=None, gpus=None, mode="ok", start=True, **kw):
        inst = sshd_session.instance(name, capture=capture, gpus=gpus, mode=mode, start=False, **kw)
        made.append(inst)
        if start:
            inst.start()
        return inst

    try:
        yield make
    finally:
        errors = []
        for inst in made:
            try:
                inst.kill()
            except Exception as e:  # noqa: BLE001 - kill the rest, then report
                errors.append(f"{inst!r}: {e}")
        if errors:
            raise sshd_lib.SshdError("teardown failed: " + "; ".join(errors))


@pytest.fixture
def sshd_instance(sshd_factory) -> sshd_lib.SshdInstance:
    return sshd_factory("gpu")


@pytest.fixture
def sshd_fleet(sshd_factory) -> list[sshd_lib.SshdInstance]:
    return [sshd_factory(name, capture=capture, gpus=gpus) for name, capture, gpus in FLEET]


@pytest.fixture
async def inproc_fleet(tmp_path: Path):
    from pilothelp import steady

    from gpu_tui.demo import start_fleet

    fleets = []

    async def start(*profiles, **kw):
        workdir = tmp_path / f"inproc-{len(fleets)}"
        fleet = await start_fleet(profiles or (steady("gpu", 50),), workdir=workdir, **kw)
        fleets.append(fleet)
        return fleet

    try:
        yield start
    finally:
        for fleet in fleets:
            await fleet.close()


@pytest.fixture
def inproc_commands(monkeypatch) -> list[tuple[str, str]]:
    """(instance, command) of every exec request the in-process servers answer, in order."""
    from gpu_tui.demo import server

    seen: list[tuple[str, str]] = []
    real = server.plan

    def plan(command, sim):
        seen.append((sim.profile.name, command))
        return real(command, sim)

    monkeypatch.setattr(server, "plan", plan)
    return seen


def pytest_sessionfinish(session, exitstatus):
    # Safety net (also registered with atexit by tests/sshd.py): no sshd outlives the run.
    if _session is not None:
        _session.stop_all()
    sshd_lib.kill_all_started()


@pytest.fixture
def slurm_cluster():
    """The one-node SLURM cluster (tests/slurmhelp.py), with no test job of gpu-tui's left on it
    before or after the test."""
    from slurmhelp import cancel_test_jobs, cluster_lock, require_cluster

    require_cluster()
    with cluster_lock():
        cancel_test_jobs("gpu-tui-")
        yield
        cancel_test_jobs("gpu-tui-")
