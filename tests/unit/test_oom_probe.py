"""The job runner's OOM-killer probe (services/jobs/job-runner.sh, issue 25), run by sh over cgroup
trees laid out as the kernel lays them out (v2 `memory.events` / `memory.max`, v1
`memory.oom_control` / `memory.limit_in_bytes`). The real kernel's count is the sshd test's
(tests/integration/test_jobs_oom.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpu_tui.core.trainlog.failures import oom_killed, with_oom_evidence

RUNNER = Path(__file__).resolve().parents[2] / "gpu_tui" / "services" / "jobs" / "job-runner.sh"
V1_UNLIMITED = "9223372036854771712"


def probe_text() -> str:
    text = RUNNER.read_text(encoding="utf-8")
    start, end = text.index("# --- OOM-killer evidence"), text.index("# --- end of the OOM-killer evidence")
    return text[start:end]


def run(script: str) -> str:
    out = subprocess.run(["sh", "-c", probe_text() + script], capture_output=True, text=True, timeout=10, check=True)
    return out.stdout.strip()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def v2_tree(root: Path, kills: int, limits: dict[str, str]) -> Path:
    """/sys/fs/cgroup with the job in /user.slice/job.scope; `limits`: memory.max per level."""
    leaf = root / "user.slice" / "job.scope"
    for level, value in limits.items():
        write(root / level / "memory.max", value + "\n")
    write(leaf / "memory.events", f"low 0\nhigh 0\nmax 12\noom {kills}\noom_kill {kills}\noom_group_kill 0\n")
    write(root / "self.cgroup", "0::/user.slice/job.scope\n")
    return leaf


def test_v2_the_jobs_own_cgroup_its_kills_and_the_tightest_limit_above_it(tmp_path: Path) -> None:
    leaf = v2_tree(tmp_path, 3, {"user.slice": str(384 << 20), "user.slice/job.scope": "max"})
    out = run(f'd=$(oom_dir {tmp_path} {tmp_path}/self.cgroup); echo "$d"; oom_limit "$d" {tmp_path}')
    found, limit = out.splitlines()
    assert found == str(leaf)
    assert limit == f"{384 << 20} cgroup"
    assert run(f"oom_kills {leaf}") == "3"


def test_v2_in_a_container_the_namespace_root_is_the_cgroup(tmp_path: Path) -> None:
    # a container with a cgroup namespace: /proc/self/cgroup says `0::/`, its files sit at the mount
    write(tmp_path / "memory.events", "oom 1\noom_kill 1\n")
    write(tmp_path / "memory.max", f"{512 << 20}\n")
    write(tmp_path / "self.cgroup", "0::/\n")
    out = run(f'd=$(oom_dir {tmp_path} {tmp_path}/self.cgroup); echo "$d"; oom_limit "$d" {tmp_path}')
    found, limit = out.splitlines()
    assert found.rstrip("/") == str(tmp_path) and limit == f"{512 << 20} cgroup"


def test_v1_a_hybrid_machine_reads_the_memory_controllers_file(tmp_path: Path) -> None:
    # as on a Docker host with cgroup v1: `4:memory:/docker/ID`, the unified tree holds no memory files
    leaf = tmp_path / "memory" / "docker" / "abc"
    write(leaf / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    write(leaf / "memory.limit_in_bytes", f"{256 << 20}\n")
    write(tmp_path / "memory" / "memory.limit_in_bytes", V1_UNLIMITED + "\n")
    write(tmp_path / "self.cgroup", "9:name=systemd:/\n4:memory:/docker/abc\n0::/\n")
    out = run(f'd=$(oom_dir {tmp_path} {tmp_path}/self.cgroup); echo "$d"; oom_limit "$d" {tmp_path}')
    found, limit = out.splitlines()
    assert found == str(leaf) and limit == f"{256 << 20} cgroup"
    assert run(f"oom_kills {leaf}") == "2"


def test_no_limit_anywhere_is_the_hosts_ram(tmp_path: Path) -> None:
    leaf = tmp_path / "memory" / "docker" / "abc"
    write(leaf / "memory.oom_control", "oom_kill 0\n")
    write(leaf / "memory.limit_in_bytes", V1_UNLIMITED + "\n")
    write(tmp_path / "self.cgroup", "4:memory:/docker/abc\n")
    ram = int(next(x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal")).split()[1])
    assert run(f"oom_limit $(oom_dir {tmp_path} {tmp_path}/self.cgroup) {tmp_path}") == f"{ram * 1024} host"


def test_no_memory_cgroup_counts_zero_and_still_names_the_ram(tmp_path: Path) -> None:
    write(tmp_path / "self.cgroup", "0::/\n")
    assert run(f'd=$(oom_dir {tmp_path} {tmp_path}/self.cgroup); echo "[$d]"') == "[]"
    # no cgroup: the kernel log's count (whatever this machine's is, a number)
    assert run('oom_kills ""').isdigit()
    assert run(f'oom_limit "" {tmp_path}').endswith(" host")


@pytest.mark.parametrize(
    ("before", "after", "more"),
    [("0", "1", True), ("4", "5", True), ("4", "4", False), ("9", "3", False), ("x", "1", False)],
)
def test_a_rise_in_the_count_is_evidence(before: str, after: str, more: bool) -> None:
    assert run(f'oom_more "{before}" "{after}" && echo yes || echo no') == ("yes" if more else "no")


def test_the_reason_names_the_limit_in_gib() -> None:
    assert oom_killed(f"{32 << 30} cgroup") == "killed (out of host memory: OOM killer, limit 32 GiB)"
    assert oom_killed("25275990016 host") == "killed (out of host memory: OOM killer, limit 23.5 GiB)"
    assert oom_killed("garbage") == "killed (out of host memory: OOM killer)"
    assert oom_killed("") is None and oom_killed(None) is None


def test_the_evidence_wins_only_where_the_log_says_less() -> None:
    ev = f"{8 << 30} cgroup"
    oom = "killed (out of host memory: OOM killer, limit 8 GiB)"
    for said in (None, "killed", "killed (DataLoader worker)", "killed (out of host memory)", "exit code 1"):
        assert with_oom_evidence(said, ev) == oom, said
    for said in ("CUDA out of memory", "Traceback: ValueError: bad", "killed (time limit)", "NaN loss"):
        assert with_oom_evidence(said, ev) == said
    assert with_oom_evidence("killed", None) == "killed"
