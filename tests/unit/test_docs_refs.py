"""Every reference to a file under docs/ resolves: the file exists, and a quoted section is a heading there.

Scanned: gpu_tui/ (*.py, *.sh), tests/ (*.py; *.md under tests/data), benchmarks/, scripts/,
docs/ and README.md. A reference is one of

- `docs/NAME.md`: from the repository root;
- `../../docs/NAME.md` (any `./` or `../` prefix): from the citing file's folder;
- a bare upper-case `NAME.md` (`CONTRACTS.md`, `FIELD_NOTES.md`): the file beside the citing
  one if there is one (outside the root), else docs/NAME.md. `README.md` and
  `LICENSE.md` alone are left out (every folder may have its own).

A reference followed by `, "Section"`, ` "Section"` or ` ("Section")` must name text found in one
of that file's markdown headings (backticks and case ignored; the quote may wrap onto the next
line). URLs (`https://pytorch.org/docs/...`) are skipped. Markdown links with an anchor
(`[x](CONTRACTS.md#sync-paths)`) in docs/ and README.md must name an existing heading's anchor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
THIS = Path(__file__).resolve()

SCANNED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpu_tui", ("*.py", "*.sh")),
    ("tests", ("*.py",)),
    ("tests/data", ("*.md",)),
    ("benchmarks", ("*.py", "*.md", "*.sh")),
    ("scripts", ("*.py", "*.md", "*.sh")),
    ("docs", ("*.md",)),
)
SKIPPED_DIRS = {"__snapshots__", "__pycache__", ".venv"}
NOT_DOCS = {"README.md", "LICENSE.md"}

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s)\]>\"'`]+", re.IGNORECASE)
_REF = re.compile(
    r"""
    (?<![\w./-])                                   # its own token, not the tail of another path
    (?P<path>(?:\.{1,2}/)*docs/[\w.-]+\.md|[A-Z][A-Z0-9_]*\.md)
    (?![\w/])
    (?:\s*,?\s*\(?\s*"(?P<section>[^"\n]{1,100}(?:\n[^"\n]{0,100})?)")?
    """,
    re.VERBOSE,
)
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_MD_LINK = re.compile(r"\]\((?P<file>[^)\s#]*)#(?P<anchor>[^)\n]+)\)")  # a space in an anchor is a broken link too


@dataclass(frozen=True)
class Ref:
    source: Path
    line: int
    path: str
    """As written: `docs/CONTRACTS.md`, `../../docs/FIELD_NOTES.md`, `CONTRACTS.md`."""
    section: str | None

    @property
    def where(self) -> str:
        return f"{_rel(self.source)}:{self.line}"

    def target(self) -> Path:
        if self.path.startswith(("./", "../")):
            return (self.source.parent / self.path).resolve()
        if self.path.startswith("docs/"):
            return (ROOT / self.path).resolve()
        beside = self.source.parent / self.path  # a folder's own README naming its SOURCES.md
        if self.source.parent != ROOT and beside.is_file():
            return beside.resolve()
        return (DOCS / self.path).resolve()


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def _norm(text: str) -> str:
    return " ".join(text.replace("`", "").replace("*", "").split()).casefold()


def find_refs(text: str, source: Path) -> list[Ref]:
    """The docs references in `text` (the contents of `source`), with their line numbers."""
    # URLs are blanked, not removed, so that offsets (and line numbers) stay right
    text = _URL.sub(lambda m: " " * len(m[0]), text)
    refs = []
    for m in _REF.finditer(text):
        path = m["path"]
        if "/" not in path and path in NOT_DOCS:
            continue
        section = " ".join(m["section"].split()) if m["section"] else None
        refs.append(Ref(source, text.count("\n", 0, m.start()) + 1, path, section))
    return refs


def headings(markdown: str) -> list[str]:
    """The markdown headings of a file, outside fenced code blocks (whose `# comments` are not headings)."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and (m := _HEADING.match(line)):
            out.append(m[1])
    return out


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def scanned_files() -> list[Path]:
    files = {ROOT / "README.md"}
    for folder, patterns in SCANNED:
        base = ROOT / folder
        for pattern in patterns:
            for path in base.rglob(pattern):
                if path.is_file() and not SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts):
                    files.add(path)
    files.discard(THIS)  # its docstring and examples are about references, not references
    return sorted(files)


def problems(refs: list[Ref]) -> list[str]:
    out = []
    cache: dict[Path, list[str]] = {}
    for ref in refs:
        target = ref.target()
        if not target.is_file():
            out.append(f"{ref.where}: {ref.path!r} -> {_rel(target)}: no such file")
            continue
        if ref.section is None:
            continue
        if target not in cache:
            cache[target] = headings(target.read_text(encoding="utf-8"))
        if not any(_norm(ref.section) in _norm(h) for h in cache[target]):
            out.append(
                f"{ref.where}: {ref.path}, {ref.section!r}: {_rel(target)} has no heading containing it "
                f"(headings: {'; '.join(cache[target])})"
            )
    return list(dict.fromkeys(out))  # a link written as [X.md](X.md) is one problem, not two


def test_every_docs_reference_resolves() -> None:
    refs = [r for path in scanned_files() for r in find_refs(path.read_text(encoding="utf-8", errors="replace"), path)]
    # the scan itself must work: these citations are known to exist
    assert any(r.path == "docs/FIELD_NOTES.md" and r.section == "Training logs" for r in refs), refs[:20]
    assert any(r.path.endswith("CONTRACTS.md") for r in refs)
    bad = problems(refs)
    assert not bad, "docs references that do not resolve:\n" + "\n".join(bad)


def test_markdown_anchors_resolve() -> None:
    bad = []
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for m in _MD_LINK.finditer(text):
            target = (path.parent / m["file"]).resolve() if m["file"] else path
            if target.suffix != ".md" or not target.is_file():
                continue  # files are the other test's business; only anchors into markdown here
            anchors = {anchor(h) for h in headings(target.read_text(encoding="utf-8"))}
            if m["anchor"] not in anchors:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{_rel(path)}:{line}: #{m['anchor']} is no heading of {_rel(target)}")
    assert not bad, "markdown anchors that do not resolve:\n" + "\n".join(bad)


# ----------------------------------------------------------------------------- the scanner itself


def _refs(text: str, source: Path | None = None) -> list[tuple[int, str, str | None]]:
    return [(r.line, r.path, r.section) for r in find_refs(text, source or ROOT / "gpu_tui" / "x.py")]


def test_scanner_reads_every_citation_form() -> None:
    text = (
        'a (docs/FIELD_NOTES.md, "Training logs") b\n'
        'c docs/CONTRACTS.md ("Other --json outputs")\n'
        'd CONTRACTS.md "Sync paths", then\n'
        "e (CONTRACTS.md) and FIELD_NOTES.md.\n"
        'f docs/FIELD_NOTES.md ("Training\n   logs") g\n'
    )
    assert _refs(text) == [
        (1, "docs/FIELD_NOTES.md", "Training logs"),
        (2, "docs/CONTRACTS.md", "Other --json outputs"),
        (3, "CONTRACTS.md", "Sync paths"),
        (4, "CONTRACTS.md", None),
        (4, "FIELD_NOTES.md", None),
        (5, "docs/FIELD_NOTES.md", "Training logs"),
    ]


def test_scanner_skips_urls_and_other_paths() -> None:
    text = (
        "see https://pytorch.org/docs/stable/notes.md and http://x.org/docs/A.md\n"
        "benchmarks/README.md, README.md, some/docs/X.md, mydocs/Y.md\n"
    )
    assert _refs(text) == []


def test_relative_references_resolve_from_the_citing_folder() -> None:
    source = ROOT / "tests" / "data" / "nvidia-smi" / "captures" / "README.md"
    (ref,) = find_refs("built from ../../../../docs/FIELD_NOTES.md.", source)
    assert ref.target() == DOCS / "FIELD_NOTES.md"
    (wrong,) = find_refs("built from ../../docs/FIELD_NOTES.md.", source)
    assert wrong.target() == ROOT / "tests" / "data" / "docs" / "FIELD_NOTES.md"
    assert problems([wrong]) and "tests/data/nvidia-smi/captures/README.md:1" in problems([wrong])[0]


def test_a_missing_section_is_named_with_file_and_line() -> None:
    (ref,) = find_refs('\n\n(docs/FIELD_NOTES.md, "No such section here")', ROOT / "gpu_tui" / "x.py")
    (message,) = problems([ref])
    assert message.startswith("gpu_tui/x.py:3: docs/FIELD_NOTES.md, 'No such section here'")


def test_headings_skip_code_fences_and_anchors_follow_github() -> None:
    md = "# Title\n```toml\n# not a heading\n```\n## Other `--json` outputs\n"
    assert headings(md) == ["Title", "Other `--json` outputs"]
    assert anchor("Other `--json` outputs") == "other---json-outputs"
    assert anchor("`-- CMD...`: the command words") == "---cmd-the-command-words"
    assert anchor("Planned (not built yet)") == "planned-not-built-yet"
