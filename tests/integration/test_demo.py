"""`gpu-tui demo`'s simulated fleet, through the app's real SSH path: asyncssh servers on loopback,
gpu_tui.remote.ssh.SshHost with real host-key checks and password login, the real probes and
parsers. No mocks.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncssh
import pytest
from demohelp import demo_known_hosts as known_hosts
from demohelp import demo_ssh_host as ssh_host
from sshhelp import stats_block_times
from waiting import until

from gpu_tui.core.errors import AuthFailed, ConfigError, HostKeyChanged, Unreachable
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.models import GpuErrorKind
from gpu_tui.demo import DEFAULT_PROFILES, DemoFleet, start_demo_fleet
from gpu_tui.services.events import (
    ConnState,
    GpuFrameReceived,
    HostStatsReceived,
    MonitorEvent,
    ProcessesReceived,
    StateChanged,
)
from gpu_tui.services.monitor.host import HostMonitor, probes
from gpu_tui.services.status import collect_status, sample_host

DEFAULT_NAMES = [
    "autodl-4090-train",
    "autodl-4090-idle",
    "runpod-h100x8",
    "lab-a100-mig",
    "vast-3090-broken",
    "autodl-flaky",
]


@pytest.fixture
async def fleet(tmp_path: Path) -> AsyncIterator[DemoFleet]:
    f = await start_demo_fleet(workdir=tmp_path / "demo", seed=7)
    try:
        yield f
    finally:
        await f.close()


# ---------------------------------------------------------------------------- the fleet itself


async def test_default_fleet_describes_itself_as_a_config(fleet: DemoFleet) -> None:
    s = fleet.settings
    assert [i.name for i in s.instances] == DEFAULT_NAMES
    assert s.settings.currency == "¥"
    assert {i.host for i in s.instances} == {"127.0.0.1"}
    assert {i.user for i in s.instances} == {"root"}
    assert len({i.port for i in s.instances}) == len(DEFAULT_NAMES)
    rates = {i.name: (i.hourly_rate, i.provider) for i in s.instances}
    assert rates["autodl-4090-train"] == (1.98, "autodl")
    assert rates["autodl-4090-idle"] == (1.98, "autodl")
    assert rates["runpod-h100x8"] == (52.0, "runpod")
    assert set(fleet.passwords) == set(DEFAULT_NAMES)
    assert len(set(fleet.passwords.values())) == len(DEFAULT_NAMES)
    lines = fleet.known_hosts_text.splitlines()
    assert len(lines) == len(DEFAULT_NAMES)
    for inst, line in zip(s.instances, lines, strict=True):
        assert line.startswith(f"[127.0.0.1]:{inst.port} ssh-ed25519 AAAA")
    # the text is valid OpenSSH known_hosts
    asyncssh.import_known_hosts(fleet.known_hosts_text)


async def test_status_of_every_default_instance(fleet: DemoFleet, tmp_path: Path) -> None:
    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    hosts = [(ssh_host(fleet, i.name, kh), i.hourly_rate) for i in fleet.settings.instances]
    statuses = {st.name: st for st in await collect_status(hosts, overall_timeout=20)}

    for st in statuses.values():
        assert st.online, (st.name, st.error)
        assert st.error is None
        assert st.stats is not None and st.stats.uptime_seconds is not None
        assert st.stats.cpu_count and st.stats.mem_total_mib and st.stats.disk_total_gib

    train = statuses["autodl-4090-train"]
    assert train.gpu_error is None
    (g,) = train.gpus
    assert g.name == "NVIDIA GeForce RTX 4090" and g.memory_total_mib == 24564 and g.power_limit_w == 450.0
    assert g.uuid and g.uuid.startswith("GPU-")
    assert 0 <= g.utilization_gpu <= 100
    assert 18_000 <= g.memory_used_mib <= 22_000
    assert 25 <= g.temperature_c <= 90 and 10 <= g.power_draw_w <= 450
    assert g.mig_mode is None  # GeForce: [N/A]
    assert 5300 <= train.uptime_seconds <= 5500  # 1.5 h
    assert train.cost_so_far == pytest.approx(1.98 * train.uptime_seconds / 3600)
    names = [p.process_name for p in train.processes]
    assert "/root/miniconda3/envs/llm/bin/python" in names and None in names  # [Not Found]
    assert all(p.gpu_uuid == g.uuid for p in train.processes)

    idle = statuses["autodl-4090-idle"]
    (g,) = idle.gpus
    assert g.name == "NVIDIA GeForce RTX 4090" and g.memory_used_mib < 100
    assert idle.uptime_seconds >= 20 * 3600 - 60
    assert idle.processes == []

    h100 = statuses["runpod-h100x8"]
    assert h100.gpu_error is None
    assert [g.index for g in h100.gpus] == list(range(8))
    assert {g.name for g in h100.gpus} == {"NVIDIA H100 80GB HBM3"}
    assert len({g.uuid for g in h100.gpus}) == 8
    assert all(g.fan_speed_percent is None for g in h100.gpus)  # data-centre: no fan
    utils = [g.utilization_gpu for g in h100.gpus]
    if max(utils) <= 40:
        # the run's eval pause (40 s of every 1200, on all eight at once): every GPU near its
        # episode level, none at its training level
        assert all(u <= 40 for u in utils)
    else:
        assert max(utils) - min(utils) > 30  # varied per GPU
    assert len(h100.processes) >= 6

    mig = statuses["lab-a100-mig"]
    (g,) = mig.gpus
    assert g.name == "NVIDIA A100-SXM4-80GB"
    assert g.utilization_gpu is None and g.mig_mode == "Enabled"
    assert g.memory_used_mib is not None and g.power_draw_w is not None
    assert mig.processes and all(p.used_memory_mib is None for p in mig.processes)

    broken = statuses["vast-3090-broken"]
    assert broken.online and broken.gpus == []
    assert broken.gpu_error is not None and broken.gpu_error.kind is GpuErrorKind.DRIVER_FAILED
    assert broken.as_json()["gpu_error"]

    flaky = statuses["autodl-flaky"]
    assert flaky.gpu_error is None and len(flaky.gpus) == 1


async def test_monitor_streams_frames_stats_and_processes(fleet: DemoFleet, tmp_path: Path) -> None:
    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    events: list[MonitorEvent] = []
    mon = HostMonitor(ssh_host(fleet, "autodl-4090-train", kh), events.append, refresh_seconds=0.5, stats_seconds=0.5)
    task = asyncio.create_task(mon.run())
    t0 = time.monotonic()
    count = lambda kind: sum(isinstance(e, kind) for e in events)  # noqa: E731
    await until(lambda: count(GpuFrameReceived) >= 4 and count(HostStatsReceived) >= 3 and count(ProcessesReceived))
    elapsed = time.monotonic() - t0
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    frames = [e.frame for e in events if isinstance(e, GpuFrameReceived)]
    stats = [e.stats for e in events if isinstance(e, HostStatsReceived)]
    procs = [e.processes for e in events if isinstance(e, ProcessesReceived)]
    states = [e.state for e in events if isinstance(e, StateChanged)]
    assert states[:2] == [ConnState.CONNECTING, ConnState.ONLINE]
    assert ConnState.OFFLINE not in states
    assert len(frames) <= elapsed / 0.5 + 3, (len(frames), elapsed)  # no faster than refresh_seconds
    assert all(len(f.gpus) == 1 and f.gpus[0].name == "NVIDIA GeForce RTX 4090" for f in frames)
    assert len(stats) >= 3
    assert all(s.uptime_seconds and s.uptime_seconds >= 5400 for s in stats)
    assert any(s.cpu_percent is not None and 0 < s.cpu_percent < 100 for s in stats[1:])
    assert procs and any(p.process_name and "python" in p.process_name for p in procs[0])
    # the stream closed with the session: no stream left running on the server
    await until(lambda: fleet.servers["autodl-4090-train"].streams == 0)


async def test_monitor_sees_the_driver_failure(fleet: DemoFleet, tmp_path: Path) -> None:
    from gpu_tui.services.events import GpuErrorChanged

    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    events: list[MonitorEvent] = []
    mon = HostMonitor(ssh_host(fleet, "vast-3090-broken", kh), events.append, refresh_seconds=0.5, stats_seconds=0.5)
    task = asyncio.create_task(mon.run())
    try:
        await until(lambda: any(isinstance(e, GpuErrorChanged) for e in events))
        await until(lambda: any(isinstance(e, HostStatsReceived) for e in events))
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    err = next(e.error for e in events if isinstance(e, GpuErrorChanged))
    assert err is not None and err.kind is GpuErrorKind.DRIVER_FAILED
    assert mon.state is ConnState.ONLINE


async def test_flaky_instance_goes_offline_and_comes_back(tmp_path: Path) -> None:
    f = await start_demo_fleet(workdir=tmp_path / "demo", drop_every=3.0, drop_for=1.0)
    try:
        kh = known_hosts(tmp_path, f.known_hosts_text)
        events: list[MonitorEvent] = []
        mon = HostMonitor(ssh_host(f, "autodl-flaky", kh), events.append, refresh_seconds=0.5, stats_seconds=0.5)
        task = asyncio.create_task(mon.run())

        def states() -> list[ConnState]:
            return [e.state for e in events if isinstance(e, StateChanged)]

        def back_online() -> bool:
            s = states()
            if ConnState.OFFLINE not in s:
                return False
            return ConnState.ONLINE in s[s.index(ConnState.OFFLINE) :]

        try:
            await until(back_online, 30.0, detail=lambda: f"states: {states()}")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        offline = next(e for e in events if isinstance(e, StateChanged) and e.state is ConnState.OFFLINE)
        assert offline.message
        assert any(isinstance(e, GpuFrameReceived) for e in events)
        # the rest of the fleet did not drop
        other = await sample_host(ssh_host(f, "autodl-4090-idle", kh), 1.98)
        assert other.online
    finally:
        await f.close()


async def test_exiting_before_reading_stdin_is_not_a_lost_link(fleet: DemoFleet, tmp_path: Path) -> None:
    # the job start's refusals (`exit 91`: no such directory) come before it reads its input; the
    # server has closed the channel when the input is sent, which is no broken link
    host = ssh_host(fleet, "autodl-4090-idle", known_hosts(tmp_path, fleet.known_hosts_text))
    await host.connect()
    try:
        res = await host.run("exit 91", stdin="{}\n" + "echo never\n" * 100)
        assert res.exit_status == 91 and host.connected
        assert (await host.run("hostname", stdin="")).ok
    finally:
        await host.close()


async def test_a_dropped_instance_refuses_then_returns_on_the_same_port(fleet: DemoFleet, tmp_path: Path) -> None:
    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    server = fleet.servers["autodl-4090-idle"]
    port = server.port
    host = ssh_host(fleet, "autodl-4090-idle", kh)
    await host.connect()
    assert host.connected
    await server.go_down()
    await until(lambda: not host.connected)
    with pytest.raises(Unreachable, match="refused"):
        await ssh_host(fleet, "autodl-4090-idle", kh).connect()
    await server.come_up()
    assert server.port == port
    st = await sample_host(ssh_host(fleet, "autodl-4090-idle", kh), 1.98)
    assert st.online and st.gpus


async def test_many_instances_all_answer(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    f = await start_demo_fleet(40, workdir=tmp_path / "demo", seed=3)
    started = time.perf_counter() - t0
    try:
        names = f.names
        assert len(names) == 40 and len(set(names)) == 40
        assert names[:6] == DEFAULT_NAMES and names[6] == "autodl-4090-train-2" and names[39] == "lab-a100-mig-7"
        assert started < 5.0
        kh = known_hosts(tmp_path, f.known_hosts_text)
        hosts = [(ssh_host(f, i.name, kh), i.hourly_rate) for i in f.settings.instances]
        statuses = await collect_status(hosts, overall_timeout=30)
        assert all(st.online for st in statuses), [(st.name, st.error) for st in statuses if not st.online]
        for st in statuses:
            if st.name.startswith("vast-3090-broken"):
                assert st.gpu_error is not None and st.gpu_error.kind is GpuErrorKind.DRIVER_FAILED
            else:
                assert st.gpu_error is None and st.gpus, st.name
        # copies of a profile are not clones: their GPUs and curves differ
        uuids = {st.gpus[0].uuid for st in statuses if st.gpus}
        assert len(uuids) == sum(1 for st in statuses if st.gpus)
    finally:
        await f.close()


@pytest.mark.parametrize("n", [0, 65, -1])
async def test_instance_count_out_of_range(tmp_path: Path, n: int) -> None:
    with pytest.raises(ConfigError, match="1 to 64"):
        await start_demo_fleet(n, workdir=tmp_path)


async def test_fewer_instances_take_the_first_profiles(tmp_path: Path) -> None:
    async with await start_demo_fleet(3, workdir=tmp_path) as f:
        assert f.names == DEFAULT_NAMES[:3]


# ---------------------------------------------------------------------------- SSH behaviour


async def test_wrong_password_is_refused(fleet: DemoFleet, tmp_path: Path) -> None:
    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    host = ssh_host(fleet, "autodl-4090-idle", kh, password="not-the-password")
    with pytest.raises(AuthFailed):
        await host.connect()
    # another instance's password does not open this one either
    host = ssh_host(fleet, "autodl-4090-idle", kh, password=fleet.passwords["autodl-4090-train"])
    with pytest.raises(AuthFailed):
        await host.connect()


async def test_keyboard_interactive_login(fleet: DemoFleet) -> None:
    inst = fleet.settings.instance("runpod-h100x8")
    async with asyncssh.connect(
        inst.host,
        port=inst.port,
        username="root",
        password=fleet.passwords[inst.name],
        preferred_auth=("keyboard-interactive",),
        known_hosts=asyncssh.import_known_hosts(fleet.known_hosts_text),
        client_keys=None,
        agent_path=None,
        config=None,
    ) as conn:
        res = await conn.run("nvidia-smi --query-gpu=index --format=csv,noheader", check=False)
    assert res.exit_status == 0 and res.stdout.split() == [str(i) for i in range(8)]


async def test_a_different_host_key_is_refused(fleet: DemoFleet, tmp_path: Path) -> None:
    # record the idle box's key under the training box's port: the app must say "host key changed"
    lines = fleet.known_hosts_text.splitlines()
    train, idle = fleet.settings.instance("autodl-4090-train"), fleet.settings.instance("autodl-4090-idle")
    idle_key = next(line for line in lines if line.startswith(f"[127.0.0.1]:{idle.port} ")).split(" ", 1)[1]
    kh = known_hosts(tmp_path, f"[127.0.0.1]:{train.port} {idle_key}\n")
    with pytest.raises(HostKeyChanged):
        await ssh_host(fleet, "autodl-4090-train", kh).connect()


async def test_unknown_commands_and_nvidia_smi_variants(fleet: DemoFleet, tmp_path: Path) -> None:
    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    host = ssh_host(fleet, "runpod-h100x8", kh)
    await host.connect()
    try:
        res = await host.run("ls -la /root")
        assert res.exit_status == 127 and res.stderr == "sh: 1: ls: not found\n" and res.stdout == ""

        res = await host.run(probes.gpu_once_command())
        assert res.exit_status == 0
        rows = nvsmi.parse_rows(res.stdout)
        assert len(rows) == 8 and len(res.stdout.splitlines()) == 8

        legacy = " ".join(nvsmi.query_gpu_argv(None, fields=nvsmi.LEGACY_QUERY_FIELDS))
        res = await host.run(legacy)
        assert res.exit_status == 0 and all(r.mig_mode is None for r in nvsmi.parse_rows(res.stdout))

        res = await host.run("nvidia-smi --query-gpu=index,bogus.field --format=csv,noheader,nounits")
        assert res.exit_status == 2 and nvsmi.unsupported_field(res.stdout) == "bogus.field"

        res = await host.run("nvidia-smi --query-gpu=index,memory.used,power.draw,clocks.sm --format=csv -i 3")
        header, row = res.stdout.splitlines()
        assert header == "index, memory.used [MiB], power.draw [W], clocks.current.sm [MHz]"
        assert row.startswith("3, ") and " MiB, " in row and row.endswith(" MHz")

        res = await host.run("nvidia-smi")
        assert nvsmi.parse_version(res.stdout) == {"driver_version": "550.127.05", "cuda_version": "12.4"}
        assert res.stdout.count("NVIDIA H100 80GB HBM3") == 8

        res = await host.run("nvidia-smi --version")
        assert nvsmi.parse_version(res.stdout)["driver_version"] == "550.127.05"

        res = await host.run(" ".join(nvsmi.compute_apps_argv()))
        apps = nvsmi.parse_compute_apps(res.stdout)
        assert len(apps) == 7 and {a.gpu_uuid for a in apps} <= {r.uuid for r in rows}
    finally:
        await host.close()


async def test_streams_tick_at_the_asked_interval_and_end_when_closed(
    fleet: DemoFleet, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="gpu_tui.demo")
    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    host = ssh_host(fleet, "runpod-h100x8", kh)
    server = fleet.servers["runpod-h100x8"]
    await host.connect()
    try:
        asm = nvsmi.FrameAssembler(clock=time.time)
        frames = 0
        t0 = time.monotonic()
        async with host.stream(probes.gpu_stream_command(0.1)) as lines:
            async for line in lines:
                out = asm.feed(line)
                if out is not None:
                    assert not isinstance(out, nvsmi.GpuError)
                    assert len(out.gpus) == 8
                    frames += 1
                    if frames == 10:
                        break
        elapsed = time.monotonic() - t0
        assert 0.7 < elapsed < 3.0, elapsed  # ~10 ticks of 100 ms
        await until(lambda: server.streams == 0)

        # the stats loop: blocks every `sleep`, apps every 3rd block
        blocks: list[list[str]] = []
        block: list[str] = []
        async with host.stream(probes.stats_loop_command(0.1, apps_every=3)) as lines:
            async for line in lines:
                if line != probes.END_MARK:
                    block.append(line)
                    continue
                blocks.append(block)
                block = []
                if len(blocks) == 6:
                    break
        assert [probes.APPS_MARK in b for b in blocks] == [True, False, False, True, False, False]
        for b in blocks:
            tags = [line.split(" ", 1)[0] for line in b]
            assert tags[:7] == ["cpu", "ncpu", "load", "mem", "mem", "up", "disk"]
        await until(lambda: server.streams == 0)
        # the connection is still good after the streams were closed
        res = await host.run(probes.gpu_once_command())
        assert res.exit_status == 0
    finally:
        await host.close()
    await until(lambda: not server.connections)
    assert not [r for r in caplog.records if r.name.startswith("gpu_tui.demo")]


async def test_same_seed_and_clock_give_the_same_readings(tmp_path: Path) -> None:
    clock = lambda: 1_800_000_000.0  # noqa: E731
    outs = []
    for run in range(2):
        async with await start_demo_fleet(workdir=tmp_path / str(run), seed=11, clock=clock) as f:
            kh = known_hosts(tmp_path, f.known_hosts_text)
            st = await sample_host(ssh_host(f, "runpod-h100x8", kh), 52.0)
            outs.append((st.gpus, st.processes, st.stats.uptime_seconds))
    assert outs[0] == outs[1]
    assert outs[0][2] == int(DEFAULT_PROFILES[2].age_s)


async def test_stats_loop_second_sample_comes_after_one_second(fleet: DemoFleet, tmp_path: Path) -> None:
    """The probe asks for its second sample after 1 s (CPU % needs two); the demo honours it."""
    name = fleet.settings.instances[0].name
    host = ssh_host(fleet, name, known_hosts(tmp_path, fleet.known_hosts_text), password=fleet.passwords[name])
    await host.connect()
    try:
        ends = await stats_block_times(host, 30.0, 2)
        assert ends[1] < 3.0, ends  # not the 30 s interval
    finally:
        await host.close()
