"""Every Textual worker in gpu_tui/ui runs with exit_on_error=False: one failed action (a lost
link, a refused command, a bug) must not close the dashboard. Read from the source (ast), no app."""

from __future__ import annotations

import ast
from pathlib import Path

import gpu_tui.ui

UI = Path(gpu_tui.ui.__file__).parent
ROOT = UI.parent.parent

EXPECTED_MISSING: set[tuple[str, str]] = set()
"""(file, qualified function) that may still start a worker without exit_on_error=False."""


def _exits_on_error(call: ast.Call) -> bool:
    for kw in call.keywords:
        if kw.arg == "exit_on_error":
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
    return True  # the default (or hidden in **kwargs) is exit_on_error=True


def _is_work(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Name) and target.id == "work") or (
        isinstance(target, ast.Attribute) and target.attr == "work"
    )


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.scope: list[str] = []
        self.found: list[tuple[str, int, str]] = []  # (qualified function, line, what)

    def _enter(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._enter(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for deco in node.decorator_list:
            if _is_work(deco) and (not isinstance(deco, ast.Call) or _exits_on_error(deco)):
                self.found.append((".".join([*self.scope, node.name]), deco.lineno, "@work"))
        self._enter(node)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr == "run_worker" and _exits_on_error(node):
            self.found.append((".".join(self.scope) or "<module>", node.lineno, "run_worker"))
        self.generic_visit(node)


def workers_that_exit_on_error() -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for path in sorted(UI.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        finder = _Finder()
        finder.visit(ast.parse(path.read_text(encoding="utf-8"), filename=rel))
        for where, line, what in finder.found:
            out.setdefault((rel, where), []).append(f"{rel}:{line} {what} in {where}")
    return out


def test_every_worker_keeps_the_app_alive_on_error() -> None:
    found = workers_that_exit_on_error()
    unexpected = [hit for key, hits in found.items() if key not in EXPECTED_MISSING for hit in hits]
    assert not unexpected, "workers without exit_on_error=False:\n" + "\n".join(unexpected)
    stale = EXPECTED_MISSING - found.keys()
    assert not stale, f"fixed: remove these from EXPECTED_MISSING: {sorted(stale)}"


def test_the_scan_sees_what_it_should() -> None:
    finder = _Finder()
    finder.visit(
        ast.parse(
            "class S:\n"
            "    @work(group='a')\n    async def a(self): ...\n"
            "    @work\n    async def b(self): ...\n"
            "    @textual.work(exit_on_error=True)\n    def c(self): ...\n"
            "    @work(exclusive=True, exit_on_error=False)\n    async def ok(self): ...\n"
            "    def d(self):\n"
            "        self.run_worker(x(), thread=True)\n"
            "        self.app.run_worker(y(), exit_on_error=False)\n"
            "        self.run_worker(z(), **kw)\n"
        )
    )
    assert [(where, what) for where, _, what in finder.found] == [
        ("S.a", "@work"),
        ("S.b", "@work"),
        ("S.c", "@work"),
        ("S.d", "run_worker"),
        ("S.d", "run_worker"),
    ]
