"""`start_demo_fleet`: start every simulated instance's SSH server and describe the fleet the way
the app's config would (`Settings`), with the passwords and known_hosts lines the app needs to log
in through its real SSH path.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from gpu_tui.config.settings import InstanceConfig, Settings, SettingsSection
from gpu_tui.core.errors import ConfigError
from gpu_tui.demo.condarun import CONDA_SECONDS
from gpu_tui.demo.jobs import JOB_SECONDS
from gpu_tui.demo.profiles import MAX_INSTANCES, Profile, fleet_profiles
from gpu_tui.demo.server import HOST, DemoServer
from gpu_tui.demo.simulate import InstanceSim

__all__ = ["DemoFleet", "start_demo_fleet", "start_fleet", "DROP_EVERY_S", "DROP_FOR_S"]

log = logging.getLogger(__name__)

DROP_EVERY_S = 90.0
DROP_FOR_S = 20.0
CURRENCY = "¥"


@dataclass(eq=False)
class DemoFleet:
    """A running simulated fleet. Close it (or use `async with`) to stop every server."""

    settings: Settings
    """The fleet as a config: instances at 127.0.0.1:PORT, user root, rates in ¥."""
    passwords: dict[str, str]
    """Instance name -> its login password (random per fleet)."""
    known_hosts_text: str
    """OpenSSH known_hosts lines, one per server: `[127.0.0.1]:PORT ssh-ed25519 AAAA...`."""
    workdir: Path
    servers: dict[str, DemoServer] = field(default_factory=dict, repr=False)
    _closed: bool = field(default=False, repr=False)

    @property
    def names(self) -> list[str]:
        return [i.name for i in self.settings.instances]

    async def close(self) -> None:
        """Stop every server and the flaps. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        await asyncio.gather(*(s.close() for s in self.servers.values()), return_exceptions=True)

    async def __aenter__(self) -> DemoFleet:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def start_demo_fleet(
    instances: int | None = None,
    *,
    workdir: Path,
    seed: int = 0,
    clock: Callable[[], float] = time.time,
    drop_every: float = DROP_EVERY_S,
    drop_for: float = DROP_FOR_S,
    job_seconds: float = JOB_SECONDS,
    conda_seconds: float = CONDA_SECONDS,
) -> DemoFleet:
    """The default fleet (six varied instances), or `instances` (1-64) cycling through it.

    `drop_every` / `drop_for`: how often (about) the flaky instances drop and for how long.
    `job_seconds`: how long (on `clock`) a job started in the demo runs (demo/jobs.py).
    `conda_seconds`: how long (real seconds) a simulated `conda create` takes (demo/condarun.py).
    Raises ConfigError for an instance count out of range.
    """
    try:
        profiles = fleet_profiles(instances)
    except ValueError:
        raise ConfigError(f"--instances must be a whole number from 1 to {MAX_INSTANCES} (got {instances!r})") from None
    return await start_fleet(
        profiles,
        workdir=workdir,
        seed=seed,
        clock=clock,
        drop_every=drop_every,
        drop_for=drop_for,
        job_seconds=job_seconds,
        conda_seconds=conda_seconds,
    )


async def start_fleet(
    profiles: Sequence[Profile],
    *,
    workdir: Path,
    seed: int = 0,
    clock: Callable[[], float] = time.time,
    drop_every: float = DROP_EVERY_S,
    drop_for: float = DROP_FOR_S,
    job_seconds: float = JOB_SECONDS,
    conda_seconds: float = CONDA_SECONDS,
) -> DemoFleet:
    """Start one server per profile (names must be unique)."""
    names = [p.name for p in profiles]
    if len(set(names)) != len(names):
        raise ValueError("profile names must be unique")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    servers: dict[str, DemoServer] = {}
    passwords: dict[str, str] = {}
    for index, profile in enumerate(profiles):
        sim = InstanceSim(
            profile,
            seed=seed,
            index=index,
            clock=clock,
            fs=workdir / profile.name / "fs",
            job_seconds=job_seconds,
            conda_seconds=conda_seconds,
        )
        passwords[profile.name] = secrets.token_urlsafe(12)
        # ed25519 keys cost ~0.1 ms each: one per server, as real instances have
        key = asyncssh.generate_private_key("ssh-ed25519")
        servers[profile.name] = DemoServer(sim, password=passwords[profile.name], host_key=key)

    fleet = DemoFleet(settings=Settings(), passwords=passwords, known_hosts_text="", workdir=workdir, servers=servers)
    try:
        await asyncio.gather(*(s.start() for s in servers.values()))
    except BaseException:
        await fleet.close()
        raise

    fleet.known_hosts_text = "".join(s.known_hosts_line + "\n" for s in servers.values())
    fleet.settings = Settings(
        settings=SettingsSection(currency=CURRENCY),
        instances=tuple(
            InstanceConfig(
                name=p.name,
                host=HOST,
                port=servers[p.name].port,
                user="root",
                hourly_rate=p.hourly_rate,
                provider=p.provider,  # type: ignore[arg-type]
                workdir=p.workdir,
            )
            for p in profiles
        ),
    )

    for index, p in enumerate(profiles):
        if p.flaky:
            rng = random.Random(f"gpu-tui-demo-flap:{seed}:{index}")
            servers[p.name].start_flapping(drop_every, drop_for, rng)

    log.info("demo fleet: %d instances on %s", len(profiles), HOST)
    return fleet
