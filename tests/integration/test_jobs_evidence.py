"""What the runner finds on the instance where a job's log says too little (issue 25), on a real
sshd: a job the kernel's OOM killer ends, in a real memory cgroup with a 384 MiB limit (SIGKILL
leaves no words; the runner's probe counts the kill), and a job that fills a real 1 MiB tmpfs
(which filesystem is full, as df says it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from memcg import memory_cgroup
from sshd import descendants
from sshhelp import ssh_host
from waiting import until

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobRequest, new_job_id
from gpu_tui.core.trainlog.hints import disk_full, disk_full_text, hint_for
from gpu_tui.services.jobs import runner as jobsvc

pytestmark = pytest.mark.sshd

LIMIT = 384 << 20
# touches every page (b"x" * n writes them): a bytearray(n) of zero pages would never be charged
HOG = "python3 -c \"print('loading', flush=True); b = b'x' * (2 << 30); print('never')\""


async def test_a_job_the_oom_killer_ends_says_so_with_the_limit(sshd_factory, tmp_path: Path) -> None:
    with memory_cgroup(LIMIT) as group:
        if group is None:
            pytest.skip("this machine gives no writable memory cgroup (needs root and cgroup v1 or v2 memory)")
        box = sshd_factory("oom-box")
        group.add([box._proc.pid, *descendants(box._proc.pid)])
        inst = InstanceConfig(name=box.name, host=box.host, port=box.port)
        host = ssh_host(box, tmp_path)
        await host.connect()
        try:
            jobs = []
            for command in ("kill -9 $$", HOG):  # one after the other: each counts only its own kills
                job = await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command=command))
                jobs.append(job)

                async def ended(job_id: str = job.id) -> bool:
                    facts = {f.id: f for f in await jobsvc.list_facts(host, inst)}
                    return facts[job_id].exit_code is not None

                await until(ended, 60, what=f"job {command!r} to end", step=0.2)
            quiet, hog = jobs
            infos = {i.id: i for i in await jobsvc.list_jobs(host, inst, with_logs=True)}
        finally:
            await host.close()
            box.stop()
    killed = infos[hog.id]
    assert killed.facts.exit_code == 137
    assert killed.failure == "killed (out of host memory: OOM killer, limit 0.4 GiB)"
    assert hint_for(killed.failure) == hint_for("killed (out of host memory)")
    assert killed.facts.oom_kill is not None and killed.facts.oom_kill.endswith(" cgroup")
    # a job that killed itself in the same cgroup, with no OOM kill while it ran, is only killed
    assert (infos[quiet.id].failure, infos[quiet.id].facts.oom_kill) == ("killed", None)


async def test_a_job_that_fills_its_disk_says_which_one(sshd_factory, tmp_path: Path) -> None:
    mount = tmp_path / "small-disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"this machine cannot mount a tmpfs: {made.stderr.decode(errors='replace').strip()}")
    try:
        box = sshd_factory("disk-box")
        inst = InstanceConfig(name=box.name, host=box.host, port=box.port)
        host = ssh_host(box, tmp_path)
        await host.connect()
        try:
            # python's own words for a full disk on close, with no path: the job's directory is the one
            fill = "python3 -c \"f = open('ckpt.bin', 'wb'); f.write(b'x' * (4 << 20)); f.close()\""
            dd = f"dd if=/dev/zero of={mount}/fill bs=64k count=64"  # `dd: error writing '<path>': No space ...`
            infos = {}
            for command, cwd in ((fill, str(mount)), (dd, None)):
                job = await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command=command, cwd=cwd))

                async def ended(job_id: str = job.id) -> bool:
                    facts = {f.id: f for f in await jobsvc.list_facts(host, inst)}
                    return facts[job_id].exit_code is not None

                await until(ended, 60, what=f"job {command!r} to end", step=0.2)
                await host.run(f"rm -f {mount}/ckpt.bin {mount}/fill", timeout=10)  # the next one fills it again
                infos[command] = {i.id: i for i in await jobsvc.list_jobs(host, inst)}[job.id]
        finally:
            await host.close()
            box.stop()
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
    for command, info in infos.items():
        assert info.failure == "No space left on device", (command, info.failure)
        disk = disk_full(info.facts.disk_full)
        assert disk is not None, (command, info.facts.disk_full)
        assert (disk.mount, disk.size_bytes, disk.use_percent) == (str(mount), 1 << 20, 100), command
        assert disk_full_text(disk).startswith(f"the full disk: {mount} (1.0 MiB, 100% used, ")
