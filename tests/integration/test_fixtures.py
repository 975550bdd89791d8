"""The sshd tier's fixtures work: real sshd, real asyncssh, no gpu_tui code."""

from __future__ import annotations

import asyncio
import os
import time

import asyncssh
import pytest
import sshd as sshd_lib

pytestmark = pytest.mark.sshd

QUERY = "index,name,uuid,utilization.gpu,memory.used,memory.total,power.draw,clocks.sm,temperature.gpu"


def connect(inst, user="root", **kw):
    """asyncssh.connect with everything spelled out (known_hosts from the public key line)."""
    args = dict(
        host=inst.host,
        port=inst.port,
        username=user,
        known_hosts=asyncssh.import_known_hosts(inst.host_public_key_line + "\n"),
        config=None,
        agent_path=None,
        connect_timeout=10,
    )
    if user == "root":
        args.update(client_keys=[asyncssh.read_private_key(str(inst.client_key_path))])
    else:
        args.update(client_keys=None, password=inst.password, preferred_auth="password")
    args.update(kw)
    return asyncssh.connect(**args)


def nvidia_smi_pids(inst):
    """Processes of this instance's sessions that run the fake nvidia-smi."""
    found = []
    for pid in sshd_lib.marked_processes(str(inst.dir)):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"/bin/nvidia-smi" in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


async def wait_closed(conn, timeout):
    start = time.monotonic()
    await asyncio.wait_for(conn.wait_closed(), timeout)
    return time.monotonic() - start


# ---------------------------------------------------------------------------- auth, PATH


async def test_key_auth_as_root(sshd_instance):
    async with connect(sshd_instance) as conn:
        assert conn.get_server_host_key().get_fingerprint() == sshd_instance.host_key_fingerprint
        r = await conn.run("id -un; echo $HOME; pwd", check=True)
    user, home, cwd = r.stdout.split()
    assert user == "root"
    assert home == cwd == str(sshd_instance.home("root"))


async def test_connect_kwargs_helper(sshd_instance):
    async with asyncssh.connect(**sshd_instance.connect_kwargs()) as conn:
        assert (await conn.run("id -un", check=True)).stdout.strip() == "root"


async def test_password_auth(sshd_instance, password_user):
    assert sshd_instance.password == password_user.password
    async with connect(sshd_instance, password_user.name) as conn:
        r = await conn.run("id -un; echo $HOME", check=True)
    assert r.stdout.split() == [password_user.name, str(sshd_instance.home(password_user.name))]

    with pytest.raises(asyncssh.PermissionDenied):
        async with connect(sshd_instance, password_user.name, password="wrong-" + password_user.password):
            pass
    # The session client key is authorised for root only.
    with pytest.raises(asyncssh.PermissionDenied):
        async with connect(
            sshd_instance,
            password_user.name,
            client_keys=[sshd_instance.client_key.key],
            password=None,
            preferred_auth="publickey",
        ):
            pass


@pytest.mark.parametrize("user", ["root", sshd_lib.PASSWORD_USER])
async def test_nvidia_smi_on_path_is_the_fake(sshd_instance, user):
    async with connect(sshd_instance, user) as conn:
        r = await conn.run("command -v nvidia-smi; command -v shutdown; echo $PATH", check=True)
    nvsmi, shutdown, path = r.stdout.split("\n")[:3]
    assert nvsmi == str(sshd_instance.bin_dir / "nvidia-smi")
    assert shutdown == str(sshd_instance.bin_dir / "shutdown")
    assert path.split(":")[0] == str(sshd_instance.bin_dir)
    assert "pyenv" not in path and ".cargo" not in path  # the machine's dotfiles stay out


async def test_sftp_starts_in_instance_home(sshd_instance):
    async with connect(sshd_instance) as conn:
        async with conn.start_sftp_client() as sftp:
            assert await sftp.getcwd() == str(sshd_instance.home("root"))


# ---------------------------------------------------------------------------- fake nvidia-smi


async def test_query_nounits_matches_capture(sshd_instance):
    captured = sshd_lib.capture_query_gpu(sshd_instance.capture)
    async with connect(sshd_instance) as conn:
        r = await conn.run(f"nvidia-smi --query-gpu={QUERY} --format=csv,noheader,nounits", check=True)
    rows = r.stdout.splitlines()
    assert len(rows) == 1
    values = rows[0].split(", ")
    fields = QUERY.replace("clocks.sm", "clocks.current.sm").split(",")
    got = dict(zip(fields, values, strict=True))
    assert got["index"] == "0"
    assert got["name"] == captured["name"][1] == "NVIDIA H100 80GB HBM3"
    assert int(got["utilization.gpu"]) == 100  # tick 0 is the captured value
    assert int(got["memory.used"]) == 19818 and int(got["memory.total"]) == 81559
    assert float(got["power.draw"]) == 631.95
    assert int(got["clocks.current.sm"]) == 1980
    assert int(got["temperature.gpu"]) == 59


async def test_query_csv_keeps_units_and_header(sshd_instance):
    async with connect(sshd_instance) as conn:
        r = await conn.run(f"nvidia-smi --query-gpu={QUERY} --format=csv", check=True)
        nounits = await conn.run("nvidia-smi --query-gpu=memory.used,power.draw --format=csv,nounits", check=True)
        bad = await conn.run("nvidia-smi --query-gpu=index,bogus.field --format=csv")
    header, row = r.stdout.splitlines()
    assert header.split(", ") == [
        "index",
        "name",
        "uuid",
        "utilization.gpu [%]",
        "memory.used [MiB]",
        "memory.total [MiB]",
        "power.draw [W]",
        "clocks.current.sm [MHz]",
        "temperature.gpu",
    ]
    values = row.split(", ")
    assert values[3] == "100 %" and values[4] == "19818 MiB" and values[6] == "631.95 W"
    assert values[7] == "1980 MHz" and values[8] == "59"
    # nounits strips values only: the header keeps its units.
    assert nounits.stdout.splitlines() == ["memory.used [MiB], power.draw [W]", "19818, 631.95"]
    assert bad.exit_status == 2
    assert bad.stdout.startswith('Field "bogus.field" is not a valid field to query.')


async def test_eight_gpus_and_compute_apps(sshd_factory):
    inst = sshd_factory("box8", capture="l40s", gpus=8)
    async with connect(inst) as conn:
        r = await conn.run("nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader", check=True)
        apps = await conn.run(
            "nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_uuid --format=csv,noheader,nounits",
            check=True,
        )
        listing = await conn.run("nvidia-smi -L", check=True)
    rows = [ln.split(", ") for ln in r.stdout.splitlines()]
    assert [row[0] for row in rows] == [str(i) for i in range(8)]
    assert len({row[1] for row in rows}) == 8
    assert {row[2] for row in rows} == {"NVIDIA L40S"}
    app_rows = [ln.split(", ") for ln in apps.stdout.splitlines()]
    assert app_rows and all(row[2].isdigit() for row in app_rows)
    assert {row[3] for row in app_rows} <= {row[1] for row in rows}
    assert len(listing.stdout.splitlines()) == 8


async def test_version_list_and_table(sshd_instance):
    async with connect(sshd_instance) as conn:
        version = await conn.run("nvidia-smi --version", check=True)
        table = await conn.run("nvidia-smi", check=True)
    assert "DRIVER version      : 590.48.01" in version.stdout
    assert "Driver Version: 590.48.01" in table.stdout and "CUDA Version: 13.1" in table.stdout


async def test_loop_yields_fresh_ticks_until_closed(sshd_instance):
    async with connect(sshd_instance) as conn:
        proc = await conn.create_process(
            "nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 200"
        )
        start = time.monotonic()
        lines = [await asyncio.wait_for(proc.stdout.readline(), 3) for _ in range(5)]
        elapsed = time.monotonic() - start
        proc.close()
        await asyncio.wait_for(proc.wait_closed(), 5)
        assert 0.5 < elapsed < 3
        stamps = [ln.split(", ")[0] for ln in lines]
        utils = [int(ln.split(", ")[2]) for ln in lines]
        assert len(set(stamps)) == 5
        assert len(set(utils)) > 1 and all(0 <= u <= 100 for u in utils)
        # The far end's nvidia-smi exits (SIGPIPE / hangup) once the channel is gone.
        deadline = time.monotonic() + 3
        while nvidia_smi_pids(sshd_instance) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert nvidia_smi_pids(sshd_instance) == []


async def test_mode_flip_mid_stream(sshd_instance):
    async with connect(sshd_instance) as conn:
        proc = await conn.create_process(
            "nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 100"
        )
        first = await asyncio.wait_for(proc.stdout.readline(), 3)
        assert first.startswith("0, ")
        sshd_instance.set_mode("driver_failed")
        text, code = sshd_lib.FAILURE_TEXT["driver_failed"]
        for _ in range(50):
            line = await asyncio.wait_for(proc.stdout.readline(), 3)
            if not line.startswith("0, "):
                break
        assert line.rstrip("\n") == text
        await asyncio.wait_for(proc.wait(), 5)
        assert proc.exit_status == code


async def test_stray_lines_between_ticks(sshd_factory):
    inst = sshd_factory("stray", mode="stray")
    async with connect(inst) as conn:
        proc = await conn.create_process(
            "nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 100"
        )
        lines = [await asyncio.wait_for(proc.stdout.readline(), 3) for _ in range(4)]
        proc.close()
    assert lines[0].startswith("0, ") and lines[2].startswith("0, ")
    assert "Xid" in lines[1] and "Xid" in lines[3]


@pytest.mark.parametrize("mode", sorted(sshd_lib.FAILURE_TEXT))
async def test_failure_modes(sshd_factory, mode):
    inst = sshd_factory("fail", mode=mode)
    text, code = sshd_lib.FAILURE_TEXT[mode]
    async with connect(inst) as conn:
        r = await conn.run("nvidia-smi --query-gpu=index --format=csv,noheader -lms 500")
    assert r.exit_status == code
    assert r.stdout.strip() == text


async def test_missing_nvidia_smi(sshd_instance):
    sshd_instance.remove_nvidia_smi()
    async with connect(sshd_instance) as conn:
        r = await conn.run("nvidia-smi -L")
        assert r.exit_status == 127
        sshd_instance.restore_nvidia_smi()
        r = await conn.run("nvidia-smi -L")
        assert r.exit_status == 0 and r.stdout.startswith("GPU 0: ")


# ---------------------------------------------------------------------------- lifecycle


async def test_freeze_is_noticed_by_keepalive_then_thaw(sshd_instance):
    conn = await connect(sshd_instance, keepalive_interval=1, keepalive_count_max=2)
    try:
        assert (await conn.run("echo up", check=True)).stdout == "up\n"
        sshd_instance.freeze()
        assert sshd_instance.is_frozen
        elapsed = await wait_closed(conn, 8)
        assert elapsed < 5
        # A frozen box accepts TCP (the kernel does) but never sends a banner.
        with pytest.raises((asyncio.TimeoutError, asyncssh.Error, OSError)):
            async with connect(sshd_instance, connect_timeout=1):
                pass
    finally:
        conn.abort()
        sshd_instance.thaw()
    assert not sshd_instance.is_frozen
    async with connect(sshd_instance) as conn2:
        assert (await conn2.run("echo back", check=True)).stdout == "back\n"


async def test_restart_same_port_same_key(sshd_instance):
    port, fp, pid = sshd_instance.port, sshd_instance.host_key_fingerprint, sshd_instance.pid
    conn = await connect(sshd_instance)
    sshd_instance.restart()
    assert (sshd_instance.port, sshd_instance.host_key_fingerprint) == (port, fp)
    assert sshd_instance.pid != pid
    await wait_closed(conn, 5)  # restart() takes the sessions down too
    async with connect(sshd_instance) as conn2:
        assert (await conn2.run("echo ok", check=True)).stdout == "ok\n"


async def test_stop_listener_only_keeps_connections(sshd_instance):
    async with connect(sshd_instance) as conn:
        sshd_instance.stop(sessions=False)
        assert not sshd_instance.is_running
        assert (await conn.run("echo still", check=True)).stdout == "still\n"
        with pytest.raises(OSError):
            async with connect(sshd_instance):
                pass
        sshd_instance.kill()  # the orphaned session goes too: marked by its environment
        await wait_closed(conn, 5)


async def test_regenerated_host_key_is_refused(sshd_instance):
    old_line, old_fp = sshd_instance.host_public_key_line, sshd_instance.host_key_fingerprint
    new_fp = sshd_instance.regenerate_host_key()
    assert new_fp != old_fp and new_fp.startswith("SHA256:")
    assert sshd_instance.host_public_key_line != old_line
    with pytest.raises(asyncssh.HostKeyNotVerifiable):
        async with connect(sshd_instance, known_hosts=asyncssh.import_known_hosts(old_line + "\n")):
            pass
    async with connect(sshd_instance) as conn:
        assert conn.get_server_host_key().get_fingerprint() == new_fp


async def test_fake_shutdown_powers_off(sshd_instance):
    conn = await connect(sshd_instance)
    try:
        # A detached job (as gpu-tui's job runner starts them) must die with the instance.
        await conn.run("setsid nohup sleep 300 >/dev/null 2>&1 < /dev/null &", check=True)
        r = await conn.run("shutdown -h now")
        assert r.exit_status == 0
        elapsed = await wait_closed(conn, 5)  # the far end closed the connection
        assert elapsed < 3
    finally:
        conn.abort()
    sshd_instance.wait_powered_off()
    assert not sshd_instance.is_running
    with pytest.raises(OSError):  # ConnectionRefusedError: nothing listens any more
        async with connect(sshd_instance, connect_timeout=3):
            pass
    calls = sshd_instance.shutdown_calls()
    assert [(c["action"], c["argv"], c["uid"]) for c in calls] == [("poweroff", ["shutdown", "-h", "now"], 0)]
    assert sshd_lib.marked_processes(str(sshd_instance.dir)) == []


async def test_fake_shutdown_refuses_non_root_and_absolute_path_is_guarded(sshd_instance, password_user):
    async with connect(sshd_instance, password_user.name) as conn:
        r = await conn.run("shutdown -h now")
    assert r.exit_status == 1 and "Interactive authentication required" in r.stdout
    assert sshd_instance.is_running and not sshd_instance.powered_off
    if sshd_instance.power_guard:
        async with connect(sshd_instance) as conn:
            r = await conn.run("/usr/sbin/shutdown -k now && /sbin/poweroff")
        assert r.exit_status == 0
        actions = [c["action"] for c in sshd_instance.shutdown_calls()]
        assert actions == ["refused-not-root", "warn", "poweroff"]
        sshd_instance.wait_powered_off()


async def test_kill_leaves_nothing_behind(sshd_instance):
    async with connect(sshd_instance) as conn:
        await conn.run("setsid nohup sleep 300 >/dev/null 2>&1 < /dev/null &", check=True)
        proc = await conn.create_process("nvidia-smi --query-gpu=index --format=csv -lms 100")
        await proc.stdout.readline()
        listener = sshd_instance.pid
        assert sshd_instance.session_pids()
        sshd_instance.kill()
        await wait_closed(conn, 5)
    assert not sshd_instance.is_running
    with pytest.raises(ProcessLookupError):
        os.kill(listener, 0)
    assert sshd_lib.marked_processes(str(sshd_instance.dir)) == []


async def test_fleet(sshd_fleet):
    assert len({inst.port for inst in sshd_fleet}) == 3
    assert len({inst.host_key_fingerprint for inst in sshd_fleet}) == 3

    async def names(inst):
        async with connect(inst) as conn:
            r = await conn.run("nvidia-smi --query-gpu=name --format=csv,noheader", check=True)
        return r.stdout.splitlines()

    results = await asyncio.gather(*(names(inst) for inst in sshd_fleet))
    assert results[0] == ["NVIDIA H100 80GB HBM3"]
    assert results[1] == ["NVIDIA L40S"] * 8
    assert results[2] == ["NVIDIA GeForce RTX 4080 SUPER"]


def test_sshd_started_in_own_session_and_pidfile(sshd_instance):
    assert (sshd_instance.dir / "sshd.pid").read_text().strip() == str(sshd_instance.pid)
    assert os.getsid(sshd_instance.pid) == sshd_instance.pid  # Ctrl-C in pytest does not reach it
