"""A job the kernel's OOM killer ends, on a real sshd whose processes sit in a real memory cgroup
with a 384 MiB limit: the log says nothing (SIGKILL leaves no words), the runner's probe counts the
kill (services/jobs/job-runner.sh), and `jobs` says so with the limit and what to do (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest
from memcg import memory_cgroup
from sshd import descendants
from sshhelp import ssh_host
from waiting import until

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobRequest, new_job_id
from gpu_tui.core.trainlog.hints import hint_for
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
