"""The scheduler is chosen once per instance (services/jobs/sched.py `scheduler_for`): outside
the scheduler modules (`slurm*`, `sched*`) at most 2 modules may tell schedulers apart by name,
by comparing something to "slurm" or by testing `.scheduler ==`."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "gpu_tui"
MAX_MODULES = 2


def _names_slurm(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.lower() == "slurm"
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):  # `x in ("slurm", ...)`
        return any(_names_slurm(e) for e in node.elts)
    return False


def _is_scheduler(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "scheduler"


def branch_sites(source: str) -> list[int]:
    """Line numbers where `source` compares something to "slurm", tests `.scheduler` with a
    comparison, or matches a case "slurm"."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_names_slurm(o) or _is_scheduler(o) for o in operands):
                lines.append(node.lineno)
        elif isinstance(node, ast.match_case) and any(_names_slurm(n) for n in ast.walk(node.pattern)):
            lines.append(node.pattern.lineno)
    return sorted(lines)


def _scheduler_module(path: Path) -> bool:
    return path.stem.startswith(("slurm", "sched"))


def test_the_finder_sees_every_form_of_the_branch() -> None:
    source = (
        'if inst.scheduler == "slurm":\n    pass\n'
        'ok = "slurm" != name\n'
        'on = cfg.scheduler != "none"\n'
        'many = kind in ("pbs", "slurm")\n'
        'match kind:\n    case "slurm":\n        pass\n'
        'fine = scheduler_for(inst).jobs_run_here and name == "slurmish"\n'
    )
    assert branch_sites(source) == [1, 3, 4, 5, 7]


def test_at_most_two_modules_outside_the_schedulers_pick_a_scheduler_by_name() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if _scheduler_module(path):
            continue
        sites = branch_sites(path.read_text(encoding="utf-8"))
        if sites:
            offenders[str(path.relative_to(PACKAGE.parent))] = sites
    assert len(offenders) <= MAX_MODULES, (
        f"{len(offenders)} modules outside slurm*/sched* tell schedulers apart by name (at most {MAX_MODULES}); "
        "ask services/jobs/sched.scheduler_for(inst) instead: "
        + ", ".join(f"{p} (line {', '.join(map(str, s))})" for p, s in offenders.items())
    )
