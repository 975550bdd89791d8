"""`gpu-tui demo`: a simulated fleet of GPU instances, each an in-process SSH server on loopback.

The app talks to it through its real SSH path (gpu_tui.remote.ssh.SshHost, host-key checks,
password login), so the demo exercises what users run. Each server answers the probes of
gpu_tui/services/monitor/probes.py (`nvidia-smi --query-gpu ... -lms`, compute apps, the host-stats
script) in the real output formats, with readings that move over time. The default fleet shows
the states a user meets: a training box, an idle one still billing, an 8-GPU box, a MIG card
(no utilisation reported), a broken driver (`gpu error`) and an instance that drops and returns.

Jobs are simulated too (demo/jobs.py, demo/jobscripts.py): the training box has a gpu-tui job
running with a growing tqdm log (`l` shows it, `x` stops it), the idle box one that finished
~50 minutes ago, and `r` starts a simulated training run (never the command typed) that ends
after `job_seconds` (2.5 min; `oom` in the command: a CUDA OOM). The conda manager (`e`) works
on /root/miniconda3 (envs `llm`, `py311`): demo/condarun.py runs the sshd tier's conda
(sim/conda.py) in-process on an install on disk in the work dir.

    fleet = await start_demo_fleet(workdir=tmp)   # or start_demo_fleet(40, workdir=tmp, job_seconds=5)
    ...  fleet.settings, fleet.passwords, fleet.known_hosts_text
    await fleet.close()
"""

from gpu_tui.demo.fleet import DROP_EVERY_S, DROP_FOR_S, DemoFleet, start_demo_fleet, start_fleet
from gpu_tui.demo.profiles import DEFAULT_PROFILES, MAX_INSTANCES, Profile, fleet_profiles

__all__ = [
    "DemoFleet",
    "start_demo_fleet",
    "start_fleet",
    "DEFAULT_PROFILES",
    "MAX_INSTANCES",
    "Profile",
    "fleet_profiles",
    "DROP_EVERY_S",
    "DROP_FOR_S",
]
