"""The conda manager's commands on `gpu-tui demo`'s simulated fleet, through the app's real SSH
path and the services the screen uses (gpu_tui.services.conda, gpu_tui.services.killable): the
demo answers them from its conda install on disk (gpu_tui/demo/condarun.py, running sim/conda.py). Nothing is run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from demohelp import demo_known_hosts as known_hosts
from demohelp import demo_ssh_host as ssh_host

from gpu_tui.demo import DemoFleet, start_demo_fleet
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services import conda as condasvc
from gpu_tui.services.envcheck import check_environment
from gpu_tui.services.killable import PID_MARK, Killable

IDLE = "autodl-4090-idle"
H100 = "runpod-h100x8"
CONDA_SECONDS = 2.5  # a create's length here (6 s in the demo); the others scale from it
GIB = 1024**3
MIB = 1024**2


@pytest.fixture
async def fleet(tmp_path: Path) -> AsyncIterator[DemoFleet]:
    f = await start_demo_fleet(workdir=tmp_path / "demo", seed=3, conda_seconds=CONDA_SECONDS)
    try:
        yield f
    finally:
        await f.close()


Connect = Callable[[str], Awaitable[SshHost]]


@pytest.fixture
async def connect(fleet: DemoFleet, tmp_path: Path) -> AsyncIterator[Connect]:
    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    hosts: list[SshHost] = []

    async def open_(name: str) -> SshHost:
        host = ssh_host(fleet, name, kh)
        await host.connect()
        hosts.append(host)
        return host

    yield open_
    for h in hosts:
        await h.close()


async def run_op(host: SshHost, command: str) -> tuple[Killable, list[tuple[float, str]]]:
    """Run `command` as the screen does; its output lines with their arrival times (from the start)."""
    proc = Killable(host, command)
    start = time.monotonic()
    seen = [(time.monotonic() - start, line) async for line in proc.lines()]
    return proc, seen


def text_of(seen: list[tuple[float, str]]) -> str:
    return "\n".join(line for _, line in seen)


async def envs(host: SshHost) -> condasvc.CondaInstall:
    install = await condasvc.conda_envs(host)
    assert install is not None
    return install


# ---------------------------------------------------------------------------- the list


async def test_envs_with_their_pythons_and_sizes(fleet: DemoFleet, connect: Connect) -> None:
    host = await connect(IDLE)
    install = await envs(host)
    assert list(install.envs) == ["base", "llm", "py311"]
    assert await condasvc.env_pythons(host, install) == {"base": "3.12.7", "llm": "3.11.10", "py311": "3.11.10"}
    sizes = await condasvc.env_sizes(host, install)
    assert 3.0 * GIB < sizes["base"] < 3.2 * GIB  # type: ignore[operator]
    assert 9.6 * GIB < sizes["llm"] < 10.0 * GIB  # type: ignore[operator]
    assert 170 * MIB < sizes["py311"] < 190 * MIB  # type: ignore[operator]
    # an env without python, or a prefix that is not there: no version, no size
    gone = condasvc.CondaInstall(exe=install.exe, envs={"ghost": "/root/miniconda3/envs/ghost"})
    assert await condasvc.env_pythons(host, gone) == {"ghost": None}
    assert await condasvc.env_sizes(host, gone) == {"ghost": None}


# ---------------------------------------------------------------------------- create, install, remove


async def test_create_streams_conda_output_then_the_env_exists(fleet: DemoFleet, connect: Connect) -> None:
    host = await connect(H100)
    install = await envs(host)
    proc = Killable(host, condasvc.create_command(install, "exp1", "3.10"))
    start = time.monotonic()
    seen: list[tuple[float, str]] = []
    listed_midway: list[str] = []
    async for line in proc.lines():
        seen.append((time.monotonic() - start, line))
        if line == "Downloading and Extracting Packages:":
            listed_midway = list((await envs(host)).envs)  # while it runs, on another channel
    took = time.monotonic() - start
    assert proc.exit_status == 0 and proc.pid is not None and proc.pid > 1
    assert not any(line.startswith(PID_MARK) for _, line in seen)
    assert seen[0][0] < 1.0 and seen[0][1] == "Channels:"
    assert 0.8 * CONDA_SECONDS < took < CONDA_SECONDS + 2.0
    assert len({round(t, 1) for t, _ in seen}) >= 6  # it came over time, not at once
    text = text_of(seen)
    for part in (
        "Platform: linux-64",
        "Collecting package metadata (repodata.json): done",
        "Solving environment: done",
        "## Package Plan ##",
        "  environment location: /root/miniconda3/envs/exp1",
        "    - python=3.10",
        "The following NEW packages will be INSTALLED:",
        "Preparing transaction: done",
        "Verifying transaction: done",
        "Executing transaction: done",
        "# To activate this environment, use",
        "#     $ conda activate exp1",
    ):
        assert part in text, part
    assert "python-3.10.15" in text
    assert "exp1" not in listed_midway  # the env appears when conda is done, not before

    after = await envs(host)
    assert after.envs["exp1"] == "/root/miniconda3/envs/exp1"
    assert (await condasvc.env_pythons(host, after))["exp1"] == "3.10.15"
    size = (await condasvc.env_sizes(host, after))["exp1"]
    assert size is not None and 100 * MIB < size < 140 * MIB
    res = await host.run("/root/miniconda3/bin/conda env list")
    assert "exp1" in res.stdout

    # a new env has no torch (the env check, in that env's python), until pip installs it
    facts = await check_environment(host, fleet.settings.instance(H100), env="exp1")
    assert facts.torch is not None and facts.torch.error and "No module named 'torch'" in facts.torch.error
    proc, seen = await run_op(host, condasvc.install_command(after, "exp1", ["torch"], pip=True))
    assert proc.exit_status == 0, text_of(seen)
    assert seen[0][1] == "Collecting torch"
    assert any(line.startswith("Installing collected packages:") and "torch" in line for _, line in seen)
    done = next(line for _, line in seen if line.startswith("Successfully installed"))
    assert "torch-2.4.1" in done and "nvidia-cudnn-cu12-9.1.0.70" in done
    assert any(line.startswith("Downloading torch-2.4.1-cp310-cp310-") for _, line in seen)
    grown = (await condasvc.env_sizes(host, after))["exp1"]
    assert grown is not None and grown > size + 4 * GIB
    facts = await check_environment(host, fleet.settings.instance(H100), env="exp1")
    assert facts.torch is not None and facts.torch.error is None and facts.torch.version == "2.4.1+cu121"


async def test_conda_and_pip_install(fleet: DemoFleet, connect: Connect) -> None:
    host = await connect(IDLE)
    install = await envs(host)
    before = (await condasvc.env_sizes(host, install))["py311"]
    assert before is not None

    proc, seen = await run_op(host, condasvc.install_command(install, "py311", ["numpy", "pandas>=2"], pip=False))
    text = text_of(seen)
    assert proc.exit_status == 0, text
    assert "  environment location: /root/miniconda3/envs/py311" in text
    assert "    - numpy\n    - pandas>=2" in text
    assert "The following NEW packages will be INSTALLED:" in text and "python-dateutil" in text
    assert "Executing transaction: done" in text and "conda activate" not in text
    after_conda = (await condasvc.env_sizes(host, install))["py311"]
    assert after_conda is not None and after_conda > before + 100 * MIB

    # again: nothing to do
    proc, seen = await run_op(host, condasvc.install_command(install, "py311", ["numpy"], pip=False))
    assert proc.exit_status == 0 and "# All requested packages already installed." in text_of(seen)

    # pip, in the env's own python: what is there is reported, the rest installed
    proc, seen = await run_op(host, condasvc.install_command(install, "py311", ["numpy", "einops==0.8.0"], pip=True))
    text = text_of(seen)
    assert proc.exit_status == 0, text
    assert "Requirement already satisfied: numpy in /root/miniconda3/envs/py311/lib/python3.11/site-packages" in text
    assert "Collecting einops==0.8.0" in text and "Successfully installed einops-0.8.0" in text
    assert "Running pip as the 'root' user" in text

    # llm has torch already: pip says so, nothing changes
    sizes = await condasvc.env_sizes(host, install)
    proc, seen = await run_op(host, condasvc.install_command(install, "llm", ["torch"], pip=True))
    assert proc.exit_status == 0
    assert seen[0][1].startswith("Requirement already satisfied: torch in /root/miniconda3/envs/llm/")
    assert (await condasvc.env_sizes(host, install))["llm"] == sizes["llm"]

    # base's python is /root/miniconda3/bin/python
    proc, seen = await run_op(host, condasvc.install_command(install, "base", ["tqdm"], pip=True))
    assert proc.exit_status == 0 and "/root/miniconda3/lib/python3.12/site-packages" in text_of(seen)


async def test_failures_exit_1_and_change_nothing(fleet: DemoFleet, connect: Connect) -> None:
    host = await connect(IDLE)
    install = await envs(host)
    sizes = await condasvc.env_sizes(host, install)

    proc, seen = await run_op(host, condasvc.install_command(install, "llm", ["numpy", "no-such-pkg"], pip=False))
    text = text_of(seen)
    assert proc.exit_status == 1
    assert "Solving environment: failed" in text
    assert "PackagesNotFoundError: The following packages are not available from current channels:" in text
    assert "  - no-such-pkg" in text and "https://repo.anaconda.com/pkgs/main/linux-64" in text

    proc, seen = await run_op(host, condasvc.install_command(install, "py311", ["no-such-thing"], pip=True))
    assert proc.exit_status == 1
    assert text_of(seen).endswith("ERROR: No matching distribution found for no-such-thing")

    # gpu-tui refuses to remove base before sending; conda itself refuses too
    proc, seen = await run_op(host, "/root/miniconda3/bin/conda env remove -n base -y 2>&1")
    assert proc.exit_status == 1
    assert "CondaEnvironmentError: cannot remove root environment" in text_of(seen)

    proc, seen = await run_op(host, "/root/miniconda3/bin/conda create -n odd python=3.99 -y 2>&1")
    assert proc.exit_status == 1 and "  - python=3.99" in text_of(seen)

    assert await envs(host) == install
    assert await condasvc.env_sizes(host, install) == sizes


async def test_remove_an_env(fleet: DemoFleet, connect: Connect) -> None:
    host = await connect(IDLE)
    install = await envs(host)
    proc, seen = await run_op(host, condasvc.remove_command(install, "py311"))
    text = text_of(seen)
    assert proc.exit_status == 0, text
    assert "Remove all packages in environment /root/miniconda3/envs/py311:" in text
    assert "The following packages will be REMOVED:" in text and "python-3.11.10-" in text
    assert text.endswith("Executing transaction: done")
    assert 0.4 * CONDA_SECONDS < seen[-1][0]
    after = await envs(host)
    assert list(after.envs) == ["base", "llm"]
    # its python went with it
    proc, seen = await run_op(host, "/root/miniconda3/envs/py311/bin/python -m pip install numpy 2>&1")
    assert proc.exit_status == 127 and "not found" in text_of(seen)
    # conda init: the demo's ~/.bashrc has conda's block already
    proc, seen = await run_op(host, condasvc.init_command(after))
    assert proc.exit_status == 0 and seen[-1][1] == "No action taken."
    assert "no change     /root/.bashrc" in text_of(seen)


# ---------------------------------------------------------------------------- cancel


async def test_cancel_a_create_midway(fleet: DemoFleet, connect: Connect) -> None:
    host = await connect(IDLE)
    install = await envs(host)
    proc = Killable(host, condasvc.create_command(install, "slow", "3.11"))
    seen: list[str] = []

    async def read() -> None:
        async for line in proc.lines():
            seen.append(line)

    started = time.monotonic()
    reader = asyncio.create_task(read())
    while "Downloading and Extracting Packages:" not in seen:
        assert not reader.done() and time.monotonic() - started < CONDA_SECONDS, seen
        await asyncio.sleep(0.05)
    pid = proc.pid
    assert pid is not None
    probe = f"kill -0 -- -{pid} 2>/dev/null || kill -0 {pid} 2>/dev/null"
    assert (await host.run(probe)).ok  # it runs
    t = time.monotonic()
    assert await proc.cancel() is True
    assert time.monotonic() - t < 1.5
    await asyncio.wait_for(reader, 5)
    assert proc.exit_status == 130 and proc.ended and proc.cancelled
    assert "CondaSignalInterrupt: Signal interrupt SIGINT" in seen
    assert "Executing transaction: done" not in seen
    assert not (await host.run(probe)).ok  # gone
    # a kill of it now finds nothing; the `; true` form still exits 0
    assert (await host.run(f"kill -s INT -- -{pid} 2>/dev/null || kill -s INT {pid} 2>/dev/null; true")).ok
    # the env is not created, not even after the create would have ended
    await asyncio.sleep(max(0.0, started + CONDA_SECONDS + 0.3 - time.monotonic()))
    assert "slow" not in (await envs(host)).envs
    # a pid nobody has
    assert not (await host.run("kill -0 -- -999999 2>/dev/null || kill -0 999999 2>/dev/null")).ok


async def test_closing_the_channel_does_not_stop_conda(fleet: DemoFleet, connect: Connect) -> None:
    host = await connect(H100)
    install = await envs(host)
    proc = Killable(host, condasvc.create_command(install, "bg", "3.12"))
    started = time.monotonic()
    async for _line in proc.lines():
        break  # the screen went away without cancelling
    pid = proc.pid
    assert pid is not None and not proc.ended
    assert (await host.run(f"kill -0 -- -{pid} 2>/dev/null || kill -0 {pid} 2>/dev/null")).ok
    await asyncio.sleep(max(0.0, started + CONDA_SECONDS + 0.3 - time.monotonic()))
    after = await envs(host)
    assert "bg" in after.envs and (await condasvc.env_pythons(host, after))["bg"] == "3.12.7"
    assert not (await host.run(f"kill -0 -- -{pid} 2>/dev/null || kill -0 {pid} 2>/dev/null")).ok


async def test_pids_are_unique_per_instance(fleet: DemoFleet, connect: Connect) -> None:
    host = await connect(IDLE)
    install = await envs(host)
    pids = set()
    for _ in range(3):
        proc, _seen = await run_op(host, condasvc.init_command(install))
        assert proc.exit_status == 0 and proc.pid is not None
        pids.add(proc.pid)
    assert len(pids) == 3
