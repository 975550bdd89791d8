"""Build gpu-tui's own SshHost / config for a fixture sshd, with trust and credentials chosen per test."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import SecretStr

from gpu_tui.remote.hostkeys import KnownHosts
from gpu_tui.remote.ssh import SshHost, SshTarget


def known_hosts(tmp: Path, *trusted: object) -> KnownHosts:
    app = tmp / "app_known_hosts"
    app.write_text("".join(f"{inst.host_public_key_line}\n" for inst in trusted))  # type: ignore[attr-defined]
    return KnownHosts(tmp / "user_known_hosts", app)


def ssh_host(
    inst: object,
    tmp: Path,
    *,
    user: str = "root",
    password: str | None = None,
    trust: bool = True,
    use_key: bool = True,
    timeout: float = 5.0,
    keepalive: tuple[float, int] = (5.0, 2),
    ssh_config: Path | None = None,
    on_connect: Callable[[SshHost], Awaitable[object]] | None = None,
) -> SshHost:
    target = SshTarget(
        inst.name,  # type: ignore[attr-defined]
        inst.host,  # type: ignore[attr-defined]
        inst.port,  # type: ignore[attr-defined]
        user,
        str(inst.client_key_path) if use_key else None,  # type: ignore[attr-defined]
    )
    return SshHost(
        target,
        known_hosts=known_hosts(tmp, *([inst] if trust else [])),
        password=SecretStr(password) if password is not None else None,
        ssh_config=ssh_config,
        connect_timeout=timeout,
        keepalive_interval=keepalive[0],
        keepalive_count_max=keepalive[1],
        on_connect=on_connect,
    )


def config_text(instances: list[object], *, connect_timeout: float = 3.0, rate: float = 1.5) -> str:
    parts = [f"[settings]\nconnect_timeout_seconds = {connect_timeout}\nrefresh_seconds = 0.5\n"]
    for inst in instances:
        parts.append(
            "[[instances]]\n"
            f'name = "{inst.name}"\nhost = "{inst.host}"\nport = {inst.port}\n'  # type: ignore[attr-defined]
            f'identity_file = "{inst.client_key_path}"\nhourly_rate = {rate}\n'  # type: ignore[attr-defined]
        )
    return "\n".join(parts)


async def stats_block_times(host: object, interval: float, blocks: int) -> list[float]:
    """Seconds from the start of the stats loop to each of its first `blocks` end marks."""
    import time

    from gpu_tui.services.monitor import probes

    ends: list[float] = []
    async with host.stream(probes.stats_loop_command(interval)) as lines:  # type: ignore[attr-defined]
        t0 = time.monotonic()
        async for line in lines:
            if line == probes.END_MARK:
                ends.append(time.monotonic() - t0)
                if len(ends) == blocks:
                    break
    return ends


def cli_env(
    tmp: Path, *, known_hosts: str | None = None, keyring: str = "keyring.backends.fail.Keyring"
) -> dict[str, str]:
    """The environment of a gpu-tui child process in `tmp`: its own XDG dirs and HOME, the app's
    known_hosts holding `known_hosts` (when given), and `keyring` as the keyring backend."""
    data = tmp / "xdg-data"
    (data / "gpu-tui").mkdir(parents=True, exist_ok=True)
    if known_hosts is not None:
        (data / "gpu-tui" / "known_hosts").write_text(known_hosts)
    (tmp / "home").mkdir(exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp / "home"),
        "XDG_DATA_HOME": str(data),
        "XDG_STATE_HOME": str(tmp / "xdg-state"),
        "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
        "PYTHON_KEYRING_BACKEND": keyring,
    }


def env_for_children(monkeypatch: object, tmp: Path, *trusted: object) -> None:
    """Point this process's environment (inherited by the gpu-tui children it starts: rsync's
    transport, the shell) at `tmp`'s XDG dirs with `trusted` instances' host keys, no keyring."""
    env = cli_env(tmp, known_hosts="".join(f"{i.host_public_key_line}\n" for i in trusted))  # type: ignore[attr-defined]
    for key in ("XDG_DATA_HOME", "XDG_STATE_HOME", "PYTHON_KEYRING_BACKEND"):
        monkeypatch.setenv(key, env[key])  # type: ignore[attr-defined]


def run_gpu_tui(
    tmp: Path,
    instances: list[object],
    *args: str,
    trust: bool = True,
    config_extra: str = "",
    timeout: float = 60,
    **cfg: float,
) -> subprocess.CompletedProcess[str]:
    """`python -m gpu_tui --config <tmp config> ARGS...` in a clean environment: its own XDG dirs
    (known hosts trusted unless `trust=False`), no keyring, a fresh HOME."""
    import sys

    cfg_file = tmp / "config.toml"
    cfg_file.write_text(config_text(instances, **cfg) + config_extra)
    known = "".join(f"{i.host_public_key_line}\n" for i in instances) if trust else None  # type: ignore[attr-defined]
    env = cli_env(tmp, known_hosts=known)
    return subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(cfg_file), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def conda_processes(env: str) -> list[int]:
    """pids on this machine running a (fake) conda create of `env`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"/bin/conda") for a in argv) and b"create" in argv and env.encode() in argv:
            found.append(int(entry))
    return found
