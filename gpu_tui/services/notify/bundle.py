"""The files the instance-side notification sender needs, built on the laptop at install time.

- the sender itself (sender.sh, sender.py),
- gpu-tui's own log rules (core/trainlog/failures and the log summary modules it sits under), rewritten
  so an older python3 can load them: annotations, `from __future__ import annotations` and
  `slots=True` dropped, `gpu_tui.core.X.Y` imports renamed `gpu_tui_X_Y`. The rules themselves are
  the package's, byte for byte in meaning: the instance never runs a second copy of them.
- for the curl/wget path: one file per request part (core/notify/urls.Request), so a shell can
  fill a template without parsing JSON.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from importlib import resources

from gpu_tui.core.i18n import _
from gpu_tui.core.notify.urls import MARKERS, Request, Unsupported

__all__ = ["ROOTS", "portable_core", "shipped_name", "sender_files", "sh_target_files", "ok_pattern"]

ROOTS = (
    "gpu_tui.core.trainlog.read",
    "gpu_tui.core.trainlog.failures",
    "gpu_tui.core.trainlog.hints",
    "gpu_tui.core.trainlog.frames",
    "gpu_tui.core.fit.oomfit",
)
"""What the sender calls: `read.summarize` (failure, last loss), `failures` alone (python < 3.11),
and for the lines under a failure's hint `hints` (the full disk, the last frame), `frames` and
`oomfit` (what fit says)."""
_CORE = "gpu_tui.core."


def _core_source(module: str) -> str:
    package, name = module.rsplit(".", 1)
    return resources.files(package).joinpath(f"{name}.py").read_text(encoding="utf-8")


def shipped_name(module: str) -> str:
    """`gpu_tui.core.trainlog.read` -> `gpu_tui_trainlog_read`: one flat module on the instance."""
    return "gpu_tui_" + module.removeprefix(_CORE).replace(".", "_")


def _closure(roots: tuple[str, ...]) -> tuple[str, ...]:
    """The core modules `roots` import, themselves included, found from their imports: a module
    the log rules start to use is shipped with them, never left behind."""
    seen: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        for node in ast.walk(ast.parse(_core_source(name))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(_CORE):
                todo.append(node.module)
    return tuple(sorted(seen))


class _Portable(ast.NodeTransformer):
    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.returns = None
        args = node.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None:
                a.annotation = None
        self._no_slots(node.decorator_list)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.generic_visit(node)
        self._no_slots(node.decorator_list)
        return node

    @staticmethod
    def _no_slots(decorators: list[ast.expr]) -> None:
        for d in decorators:
            if isinstance(d, ast.Call):
                d.keywords = [k for k in d.keywords if k.arg != "slots"]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        # a dataclass field needs an annotation; any string will do
        node.annotation = ast.Constant("_")
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id == "zip":  # zip(strict=): python >= 3.10; a check only
            node.keywords = [k for k in node.keywords if k.arg != "strict"]
        if isinstance(f, ast.Attribute) and f.attr == "compile" and getattr(f.value, "id", None) == "re":
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    part.value = no_possessive(part.value)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | None:
        if node.module == "__future__":
            return None
        if node.module and node.module.startswith(_CORE):
            node.module = shipped_name(node.module)
        return node


def no_possessive(pattern: str) -> str:
    """A pattern without possessive quantifiers (`*+`: python >= 3.11) for an older python3.
    The rules use them only where the greedy form matches the same (what follows cannot match
    what was given back), to keep a long line from backtracking."""
    out: list[str] = []
    escaped = in_class = False
    for i, c in enumerate(pattern):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif in_class:
            in_class = c != "]" or pattern[i - 1] == "["
        elif c == "[":
            in_class = True
        elif c == "+" and i and pattern[i - 1] in "*+?}" and (i < 2 or pattern[i - 2] != "\\"):
            continue  # possessive: the greedy quantifier before it stays
        out.append(c)
    return "".join(out)


def portable_core(roots: tuple[str, ...] = ROOTS) -> dict[str, str]:
    """{file name: source} of the log rules `roots` need, loadable by python3 >= 3.7 (3.6:
    failures alone, which needs no dataclasses)."""
    out = {}
    for module in _closure(roots):
        tree = ast.fix_missing_locations(_Portable().visit(ast.parse(_core_source(module))))
        source = module.replace(".", "/") + ".py"
        out[f"{shipped_name(module)}.py"] = f"# generated by gpu-tui from {source}\n{ast.unparse(tree)}\n"
    return out


def sender_files() -> dict[str, str]:
    """{bin/ file name: text} of the sender."""
    pkg = resources.files("gpu_tui.services.notify")
    return {
        "notify-v1.sh": pkg.joinpath("sender.sh").read_text(encoding="utf-8"),
        "notify-v1.py": pkg.joinpath("sender.py").read_text(encoding="utf-8"),
    }


def ok_pattern(req: Request) -> str:
    """An extended regex over the reply (newlines removed) that holds when it was accepted."""
    if not req.ok_field:
        return ""
    values = "|".join(json.dumps(v) for v in req.ok_values)
    return f'"{re.escape(req.ok_field)}" *: *({values})([,}} ]|$)'


def _curl_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _template_lines(body: object) -> str:
    """The JSON body as `L<literal>` / `M <marker>` lines (see sender.sh's body_of)."""
    text = json.dumps(body, ensure_ascii=False)
    marks = "|".join(re.escape(json.dumps(m)) for m in MARKERS)
    lines = []
    for piece in re.split(f"({marks})", text):
        if not piece:
            continue
        lines.append("M " + piece[1:-1] if piece.startswith('"@') and piece[1:-1] in MARKERS else "L" + piece)
    return "\n".join(lines) + "\n"


def sh_target_files(index: int, req: Request, masked: str) -> Mapping[str, str]:
    """{file name under notify/sh/: text} for target number `index`."""
    stem = f"t{index}"
    for key, value in req.headers:
        if "\n" in key or "\n" in value:
            raise Unsupported(_("a header holds a line break: the instance cannot send it"))
    curl = [
        f"url = {_curl_quote(req.url)}",
        'request = "POST"',
        "silent",
        "show-error",
        'write-out = "%{http_code}"',
        *(f"header = {_curl_quote(f'{k}: {v}')}" for k, v in req.headers),
    ]
    wgetrc = [f"header = {k}: {v}" for k, v in req.headers]
    files = {
        f"{stem}.meta": f"{masked}\n{req.sign or ''}\n{ok_pattern(req)}\n",
        f"{stem}.curl": "\n".join(curl) + "\n",
        f"{stem}.wgetrc": "\n".join(wgetrc) + "\n",
        f"{stem}.url": req.url + "\n",
        f"{stem}.body": _template_lines(req.body),
    }
    if req.sign:
        files[f"{stem}.key"] = req.secret
    return files
