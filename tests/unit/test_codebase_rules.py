"""Rules that keep the codebase one a newcomer can pick up, measured rather than reviewed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gpu_tui"
MAX_LINES = 500
MAX_TYPE_IGNORES = 15
MAY_IMPORT_APP = {"app.py", "factory.py", "__init__.py"}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_over_500_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in _modules() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these (over {MAX_LINES} lines): {long}"


def test_few_type_ignores() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _modules()
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"#\s*type:\s*ignore", line)
    ]
    assert len(found) <= MAX_TYPE_IGNORES, f"{len(found)} `type: ignore` (at most {MAX_TYPE_IGNORES}): {found}"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_only_the_factory_and_the_package_import_the_app() -> None:
    ui = PACKAGE / "ui"
    offenders = [
        str(p.relative_to(ROOT))
        for p in ui.rglob("*.py")
        if not (p.parent == ui and p.name in MAY_IMPORT_APP) and "gpu_tui.ui.app" in _imports(p)
    ]
    assert not offenders, f"these import gpu_tui.ui.app (type them against ui/dashboard/context.py): {offenders}"


def test_ci_runs_ruff_and_mypy_before_the_tests() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    ruff, mypy, pytest = (ci.find(f"-m {tool}") for tool in ("ruff", "mypy", "pytest"))
    assert -1 < ruff < pytest and -1 < mypy < pytest, "run ruff and mypy in .ci/run, before pytest"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "[tool.ruff" in pyproject and "[tool.mypy]" in pyproject


def test_no_test_names_a_path_of_one_machine() -> None:
    # an interpreter that happens to exist on one machine (one that Path.exists() cannot even
    # look at as another user) belongs in the test set-up: tests/oldpythons.py, .ci/run
    one_machine = re.compile(r"/\.pyenv/(versions|shims)/")
    tests = ROOT / "tests"
    found = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for p in sorted(tests.rglob("*.py"))
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and one_machine.search(node.value)
    ]
    assert not found, f"these name a path of one machine: {found}"
