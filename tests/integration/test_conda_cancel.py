"""Cancelling a conda operation kills it ON the instance (closing the channel would not)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sshhelp import cli_env, conda_processes, config_text, ssh_host

from gpu_tui.services import conda as condasvc
from gpu_tui.services.killable import Killable

pytestmark = pytest.mark.sshd


async def test_cancel_kills_a_create_on_the_instance(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_conda_delay(60)
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    try:
        install = await condasvc.conda_envs(host)
        assert install is not None
        proc = Killable(host, condasvc.create_command(install, "slow", "3.11"))
        seen: list[str] = []

        async def read() -> None:
            async for line in proc.lines():
                seen.append(line)

        reader = asyncio.create_task(read())
        end = time.monotonic() + 20
        while not any("Downloading and Extracting" in s or "environment location" in s for s in seen):
            assert time.monotonic() < end and not reader.done(), seen
            await asyncio.sleep(0.1)
        assert proc.pid is not None and not any(s.startswith("@gpu-tui-pid") for s in seen)
        assert conda_processes("slow"), "the create should be running on the instance"
        started = time.monotonic()
        assert await proc.cancel() is True
        took = time.monotonic() - started
        await asyncio.wait_for(reader, 10)
        assert took < 6, took  # SIGINT is enough for conda
        assert conda_processes("slow") == []
        assert "slow" not in sshd_instance.conda_envs()
        # The connection is still usable afterwards.
        assert (await host.run("echo still here")).stdout.strip() == "still here"
    finally:
        await host.close()


async def test_cancel_after_the_end_is_a_no_op(sshd_instance, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    try:
        proc = Killable(host, "sh -c 'echo one; echo two'")  # one command: it is exec'd
        assert [line async for line in proc.lines()] == ["one", "two"]
        assert proc.exit_status == 0 and proc.ended
        assert await proc.cancel() is True
    finally:
        await host.close()


def test_ctrl_c_on_the_cli_stops_conda_there(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_conda_delay(60)
    cfg = tmp_path / "config.toml"
    cfg.write_text(config_text([sshd_instance]))
    env = cli_env(tmp_path, known_hosts=sshd_instance.host_public_key_line + "\n")
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpu_tui",
            "--config",
            str(cfg),
            "conda",
            sshd_instance.name,
            "create",
            "slowcli",
            "--python",
            "3.11",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert cli.stdout is not None
        for line in cli.stdout:
            if "environment location" in line:
                break
        end = time.monotonic() + 10
        while not conda_processes("slowcli"):
            assert time.monotonic() < end
            time.sleep(0.1)
        cli.send_signal(signal.SIGINT)
        out, err = cli.communicate(timeout=20)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 130, err
    assert "cancelled; conda stopped" in err and "Traceback" not in err
    assert conda_processes("slowcli") == []
    assert "slowcli" not in sshd_instance.conda_envs()
