"""Who holds each GPU (issue 27): holders.sh run by a real sh over stand-in device files and the
driver's real `information` files (tests/data/nvidia-smi/containers, with their sources), and the join of
its scan with the driver's compute apps (core/metrics/holders.py)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tui.core.metrics.holders import Holder, HolderScan, attribute, parse_scan
from gpu_tui.core.models import GpuProcess, GpuSample
from gpu_tui.services.monitor.probes import holders_script

REAL = Path(__file__).resolve().parents[1] / "data" / "nvidia-smi" / "containers"


def scan(sysroot: Path, state: Path | None = None, *, path: str | None = None, shell: str = "sh") -> str:
    script = holders_script() + f'gpu_holders {state or ""}; printf "%s" "$GH"\n'
    env = dict(os.environ, GPU_TUI_SYSROOT=str(sysroot))
    if path is not None:
        env["PATH"] = path
    res = subprocess.run([shutil.which(shell) or shell, "-c", script], capture_output=True, text=True, env=env)
    assert res.returncode == 0 and not res.stderr, res.stderr
    return res.stdout


def real_information(name: str) -> list[str]:
    """The `information` files in a real paste (one or more, each after its `cat` line)."""
    blocks, cur = [], []
    for line in (REAL / name).read_text().splitlines():
        if line.startswith(("cat ", "[")) or not line.strip():
            if cur:
                blocks.append("\n".join(cur) + "\n")
            cur = []
        else:
            cur.append(line)
    if cur:
        blocks.append("\n".join(cur) + "\n")
    return blocks


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "information-l4-tabs-device-minor-gpu-excluded.txt",
            ["g 0 0000:70:00.0 GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689"],
        ),
        (
            "information-two-gpus-gtx1080ti-titanx-host.txt",
            [
                "g 0 0000:17:00.0 GPU-e953c3c5-dba7-029e-ce44-7b51417131df",
                "g 1 0000:65:00.0 GPU-4ce175fe-a313-4c4a-d620-560e96e8ef2e",
            ],
        ),
        ("information-gtx650-no-device-minor.txt", []),  # no minor: nothing claimed
    ],
)
def test_the_drivers_real_information_files_give_minor_bus_and_uuid(tmp_path: Path, name: str, expected) -> None:
    for text in real_information(name):
        bus = next(line.split()[-1] for line in text.splitlines() if line.startswith("Bus Location"))
        d = tmp_path / "proc/driver/nvidia/gpus" / bus
        d.mkdir(parents=True)
        (d / "information").write_text(text)
    out = scan(tmp_path)
    assert [line for line in out.splitlines() if line.startswith("g ")] == expected
    parsed = parse_scan(out)
    assert {m: b for m, (b, _u) in parsed.bus_of_minor.items()} == {int(e.split()[1]): e.split()[2] for e in expected}


needs_mknod = pytest.mark.skipif(os.geteuid() != 0, reason="character device stand-ins need mknod (root)")


@needs_mknod
def test_the_scan_finds_holders_with_builtins_alone(tmp_path: Path) -> None:
    """With no program on PATH the holders are all found (only their command lines, `tr`'s, are
    missing): the scan starts no process for them."""
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm"):
        os.mknod(dev / name, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    (tmp_path / "state/jobs/j-1").mkdir(parents=True)
    hold = "import sys, time\nfs = [open(p, 'rb') for p in sys.argv[1:]]\nprint('ok', flush=True)\ntime.sleep(60)\n"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", hold, str(dev / "nvidia1"), str(dev / "nvidiactl")], stdout=subprocess.PIPE
        ),
        subprocess.Popen([sys.executable, "-c", hold, str(dev / "nvidia-uvm")], stdout=subprocess.PIPE),
        subprocess.Popen(
            [sys.executable, "-c", hold, str(dev / "nvidia0"), str(dev / "nvidia1")], stdout=subprocess.PIPE
        ),
    ]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == b"ok\n"
        (tmp_path / "state/jobs/j-1/pid").write_text(f"{procs[2].pid}\n")
        full = scan(tmp_path, tmp_path / "state")
        # nothing on PATH: the same holders, without command lines
        bare = scan(tmp_path, tmp_path / "state", path="/nonexistent", shell=shutil.which("sh") or "/bin/sh")
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for out in (full, bare):
        got = parse_scan(out)
        assert [(h.pid, h.minors) for h in got.holders] == [(procs[0].pid, (1,)), (procs[2].pid, (0, 1))]
        assert got.devices == (0, 1)  # nvidiactl, nvidia-uvm: never GPUs
        assert got.jobs == {procs[2].pid: "j-1"}
        assert got.holders[0].user == "root" and got.holders[0].ppid == os.getpid()
    assert parse_scan(bare).holders[0].command is None
    h = parse_scan(full).holders[0]
    assert h.command is not None and h.command.startswith(sys.executable + " -c import sys")


# ------------------------------------------------------------------------------- the join


def gpu(index: int, used: int | None, uuid: str | None = None) -> GpuSample:
    return GpuSample(index=index, uuid=uuid or f"GPU-{index}", name="NVIDIA L4", memory_used_mib=used)


def real_driver_rows(gpu_uuid: str) -> list[GpuProcess]:
    """container-compute-apps-notfound-mib-3rows.txt (pid, process_name, used_gpu_memory with
    units; the paste has no uuid column: one GPU's rows)."""
    rows = []
    for line in (REAL / "container-compute-apps-notfound-mib-3rows.txt").read_text().splitlines():
        pid, name, mem = (p.strip() for p in line.split(","))
        assert name == "[Not Found]"
        rows.append(GpuProcess(int(pid), None, int(mem.removesuffix(" MiB")), gpu_uuid))
    return rows


def test_three_real_host_pids_and_no_holder_here_are_the_drivers_word_only() -> None:
    driver = real_driver_rows("GPU-0")
    att = attribute(driver, HolderScan(devices=(0,)), [gpu(0, 4666 + 1046 + 48188 + 300)])
    assert [(r.pid, r.host_pid, r.used_memory_mib, r.attributed) for r in att.rows] == [
        (None, 617645, 48188, "driver"),
        (None, 664424, 4666, "driver"),
        (None, 616312, 1046, "driver"),
    ]
    assert att.unnamed_mib == {0: 4666 + 1046 + 48188 + 300}  # none of it is named here


def test_one_root_and_its_forked_workers_take_the_one_driver_entry() -> None:
    main = Holder(pid=40, minors=(0,), ppid=1, pgrp=40, command="python train.py", user="root")
    workers = [Holder(pid=41 + i, minors=(0,), ppid=40, pgrp=40, command="python train.py") for i in range(2)]
    s = HolderScan(holders=(main, *workers), devices=(0,), jobs={40: "j-7"})
    att = attribute([GpuProcess(3301877, None, 15872, "GPU-0")], s, [gpu(0, 16400)])
    assert [(r.pid, r.host_pid, r.used_memory_mib, r.attributed, r.job) for r in att.rows] == [
        (40, 3301877, 15872, "fd", "j-7"),
        (41, None, None, "fd", "j-7"),
        (42, None, None, "fd", "j-7"),
    ]
    assert att.unnamed_mib == {0: 528} and att.job_mib("j-7") == 16400


def test_two_unrelated_holders_never_get_a_lone_driver_entrys_memory() -> None:
    a = Holder(pid=10, minors=(0,), ppid=1)
    b = Holder(pid=20, minors=(0,), ppid=1)
    att = attribute([GpuProcess(999999, None, 8000, "GPU-0")], HolderScan((a, b), (0,)), [gpu(0, 8100)])
    assert [(r.pid, r.host_pid, r.used_memory_mib) for r in att.rows] == [
        (10, None, None),
        (20, None, None),
        (None, 999999, 8000),
    ]
    assert att.unnamed_mib == {0: 8100}


def test_a_driver_pid_is_trusted_only_on_the_gpu_its_process_holds() -> None:
    h = Holder(pid=500, minors=(1,), ppid=1, command="python a.py")
    gpus = [gpu(0, 9000), gpu(1, 3000)]
    att = attribute([GpuProcess(500, None, 9000, "GPU-0")], HolderScan((h,), (0, 1)), gpus)
    # pid 500 here holds GPU 1, the driver's 500 is on GPU 0: a host pid that happens to match
    assert [(r.gpu, r.pid, r.host_pid, r.attributed) for r in att.rows] == [
        (0, None, 500, "driver"),
        (1, 500, None, "fd"),
    ]


def test_minors_map_to_indexes_by_uuid_then_bus_order_then_device_order() -> None:
    gpus = [gpu(0, 0, "GPU-a"), gpu(1, 0, "GPU-b")]
    by_uuid = HolderScan(bus_of_minor={3: ("0000:81:00.0", "GPU-b"), 5: ("0000:01:00.0", "GPU-a")})
    assert by_uuid.index_of_minor(gpus) == {5: 0, 3: 1}
    by_bus = HolderScan(bus_of_minor={3: ("0000:81:00.0", None), 5: ("0000:01:00.0", None)})
    assert by_bus.index_of_minor(gpus) == {5: 0, 3: 1}
    # a container given the host's GPUs 4 and 6: its own two device files, in order
    assert HolderScan(devices=(6, 4)).index_of_minor(gpus) == {4: 0, 6: 1}
    # counts that disagree: nothing guessed (the GPU shows as unknown)
    assert HolderScan(devices=(0, 1, 2)).index_of_minor(gpus) == {}


def test_no_scan_keeps_the_drivers_pids_as_host_pids() -> None:
    att = attribute([GpuProcess(77, "python", 100, "GPU-0")], None, [gpu(0, 100)])
    assert [(r.pid, r.host_pid, r.command) for r in att.rows] == [(None, 77, "python")]


def test_scan_lines_that_are_not_the_format_are_skipped() -> None:
    got = parse_scan(
        "h 12 0\nh x 0\np 12 0 1 12 99\nc 12 python  a b\nu 0 root\nnonsense\nh 13\nj 12 j-1\ng 0 0000:01:00.0 -\n"
    )
    assert got.holders == (Holder(12, (0,), 0, "root", 1, 12, 99, "python  a b"),)
    assert got.jobs == {12: "j-1"} and got.bus_of_minor == {0: ("0000:01:00.0", None)}


@needs_mknod
def test_without_nvidia_devices_the_render_nodes_are_the_gpus(tmp_path: Path) -> None:
    """An AMD instance (issue 28): /dev/dri/renderD128 and up; a process holding one is found the
    same way (its VRAM comes from fdinfo's drm-memory-vram, which a stand-in node cannot have)."""
    dri = tmp_path / "dev" / "dri"
    dri.mkdir(parents=True)
    for n in (128, 129):
        os.mknod(dri / f"renderD{n}", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    hold = "import sys, time\nf = open(sys.argv[1], 'rb')\nprint('ok', flush=True)\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", hold, str(dri / "renderD129")], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ok\n"
        got = parse_scan(scan(tmp_path))
    finally:
        proc.kill()
        proc.wait()
    assert got.render == (128, 129) and got.devices == ()
    assert [(h.pid, h.minors) for h in got.holders] == [(proc.pid, (129,))]
    rows = attribute([], got, [gpu(0, 100), gpu(1, 9000)]).rows
    assert [(r.gpu, r.pid, r.used_memory_mib, r.attributed) for r in rows] == [(1, proc.pid, None, "fd")]


def test_fdinfo_vram_is_counted_once_per_drm_client() -> None:
    """`m` lines as holders.sh prints them from amdgpu's fdinfo (`drm-memory-vram:\\t4194304 KiB`;
    the kernel's common helper prints no unit, KiB or MiB): a dup'd fd repeats its client id."""
    text = (
        "r 128\nr 129\np 77 0 1 77 5\nc 77 python train.py\nh 77 129\n"
        "m 77 129 12 4194304 KiB\nm 77 129 12 4194304 KiB\nm 77 129 13 512 MiB\n"
    )
    got = parse_scan(text)
    assert got.vram_mib == {(77, 129): 4096 + 512}
    (row,) = attribute([], got, [gpu(0, 10), gpu(1, 4700)]).rows
    assert (row.gpu, row.pid, row.used_memory_mib, row.command) == (1, 77, 4608, "python train.py")


def test_render_nodes_of_a_machine_whose_gpus_are_not_read_are_no_gpu_processes() -> None:
    """A laptop's Intel iGPU (`gpu-tui local`, no nvidia-smi, no AMD tool): its render node's
    holders (the desktop) are not GPU processes."""
    got = parse_scan("r 128\np 900 1000 1 900 5\nc 900 /usr/bin/gnome-shell\nh 900 128\n")
    assert attribute([], got, []).rows == ()
