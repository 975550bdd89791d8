"""The house a newcomer walks into: docs/ARCHITECTURE.md's package map names every package and
every module outside ui/ (and nothing that is gone), and no package holds more than 25 modules.

The map is the fenced block under "## Package layout": one entry a line, two spaces of indent a
level, a folder written `name/`, a file `name.py` (or `.sh`), then what it holds. ui/screens and
ui/widgets are named by their folder's rule (one screen or widget per module), so modules under
ui/ may be left out; ui's packages may not.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gpu_tui"
MAP_DOC = ROOT / "docs" / "ARCHITECTURE.md"
MAX_MODULES = 25

_ENTRY = re.compile(r"^(?P<indent> *)(?P<name>[\w.-]+(?:/|\.py|\.sh|\.tcss))(?:\s|$)")


def _map_block() -> list[str]:
    text = MAP_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Package layout\n", 1)[1]
    fence = section.split("```", 2)
    assert len(fence) == 3, "the package map is one fenced block under '## Package layout'"
    return fence[1].splitlines()


def named_paths() -> set[str]:
    """Paths relative to the repository root (`gpu_tui/core/trainlog/`, `gpu_tui/cli.py`)."""
    stack: list[str] = []
    named: set[str] = set()
    for line in _map_block():
        m = _ENTRY.match(line)
        if not m:
            continue
        depth = len(m["indent"]) // 2
        del stack[depth:]
        path = "".join(stack) + m["name"]
        named.add(path)
        if m["name"].endswith("/"):
            stack.append(m["name"])
    return named


def _packages() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)


def _rel(path: Path, folder: bool = False) -> str:
    return path.relative_to(ROOT).as_posix() + ("/" if folder else "")


def test_the_map_names_every_package_and_every_module_outside_ui() -> None:
    named = named_paths()
    missing = [_rel(p, folder=True) for p in _packages() if _rel(p, folder=True) not in named]
    for pkg in _packages():
        if pkg == PACKAGE / "ui" or PACKAGE / "ui" in pkg.parents:
            continue
        missing += [_rel(m) for m in sorted(pkg.glob("*.py")) if m.name != "__init__.py" and _rel(m) not in named]
        missing += [_rel(s) for s in sorted(pkg.glob("*.sh")) if _rel(s) not in named]
    assert not missing, f"docs/ARCHITECTURE.md's package map does not name: {missing}"


def test_the_map_names_nothing_that_is_gone() -> None:
    gone = sorted(p for p in named_paths() if not (ROOT / p).exists())
    assert not gone, f"docs/ARCHITECTURE.md's package map names what does not exist: {gone}"


def test_the_map_is_read_as_a_tree() -> None:
    named = named_paths()
    assert {"gpu_tui/", "gpu_tui/cli.py", "gpu_tui/core/", "gpu_tui/core/trainlog/"} <= named
    assert "gpu_tui/trainlog/" not in named


def test_no_package_holds_more_than_25_modules() -> None:
    crowded = {
        _rel(p, folder=True): n
        for p in _packages()
        if (n := len(list(p.glob("*.py"))) + sum(1 for d in p.iterdir() if (d / "__init__.py").exists())) > MAX_MODULES
    }
    assert not crowded, f"give a feature of these its own subpackage (over {MAX_MODULES} modules): {crowded}"
