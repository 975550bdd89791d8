"""gpu-tui's own section of `~/.ssh/config`: Host blocks for its instances, between two markers.

Pure text in, text out (config/sshwrite.py reads and writes the file). Everything outside the
markers is the user's and is kept byte for byte. The section goes at the top of the file the
first time: OpenSSH takes the first value it finds for each keyword, so a `Host *` block of the
user's above it (`User alice`) would otherwise override the instance's own user. It ends with a
bare `Host *` line, so that top-level lines of the user's that follow it still apply to every
host, as they did before the section was put above them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _

__all__ = [
    "BEGIN",
    "END",
    "HostBlock",
    "alias_problem",
    "render_block",
    "splice",
    "blocks_in",
    "remove_block",
    "user_aliases",
]

BEGIN = "# >>> gpu-tui instances >>> (written by `gpu-tui ssh-config`; edits inside are replaced)"
END = "# <<< gpu-tui instances <<<"
_BEGIN_RE = re.compile(r"^# >>> gpu-tui instances >>>")
_END_RE = re.compile(r"^# <<< gpu-tui instances <<<")
_HOST_LINE = re.compile(r"^\s*host(?:\s*=\s*|\s+)(.*)$", re.IGNORECASE)
_ALIAS = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


@dataclass(frozen=True, slots=True)
class HostBlock:
    """One instance's block: what `ssh ALIAS` needs to log in as gpu-tui does."""

    alias: str
    hostname: str
    port: int
    user: str
    identity_files: tuple[str, ...]
    """Absolute paths or `~/...`, in the order OpenSSH should offer them."""
    known_hosts: tuple[str, ...]
    """Every file OpenSSH should read host keys from (and only those)."""


def alias_problem(name: str) -> str | None:
    """Why `name` cannot be a `Host` alias, or None. OpenSSH treats `*`, `?`, `!` and `,` as
    pattern syntax and a leading `-` as an option to `ssh`; instance names never hold the
    first ones, but may start with `-` or `.`."""
    if not _ALIAS.fullmatch(name):
        return _(
            "{name!r} cannot be an ssh alias: it must start with a letter, digit or _ and hold only "
            "letters, digits, `.`, `_` and `-`; rename the instance (`i` in the dashboard, or the config)"
        ).format(name=name)
    return None


def _word(value: str) -> str:
    """A config argument: quoted when it holds a space; a `"` cannot be written at all."""
    if '"' in value or "\n" in value:
        raise InputError(
            _(
                "{value!r} cannot be written to an ssh config (it holds a quote or a newline); "
                "move the file to a plain path"
            ).format(value=value)
        )
    return f'"{value}"' if any(c.isspace() for c in value) else value


def render_block(block: HostBlock) -> list[str]:
    """The block's lines, OpenSSH keywords in their usual spelling."""
    lines = [
        f"Host {block.alias}",
        f"    HostName {_word(block.hostname)}",
        f"    Port {block.port}",
        f"    User {_word(block.user)}",
    ]
    lines += [f"    IdentityFile {_word(path)}" for path in block.identity_files]
    lines.append("    UserKnownHostsFile " + " ".join(_word(p) for p in block.known_hosts))
    # exactly the keys gpu-tui trusts: a new key is accepted in gpu-tui (it shows the fingerprint)
    lines.append("    StrictHostKeyChecking yes")
    lines.append("    ForwardAgent no")
    return lines


def _find(lines: Sequence[str]) -> tuple[int, int] | None:
    """(begin, end) line indexes of the section's markers, or None when it is not there."""
    begin = next((i for i, line in enumerate(lines) if _BEGIN_RE.match(line)), None)
    if begin is None:
        return None
    end = next((i for i in range(begin + 1, len(lines)) if _END_RE.match(lines[i])), None)
    if end is None:
        raise InputError(
            _(
                "~/.ssh/config: the line {line} starts gpu-tui's section but nothing ends it; "
                "add `{end}` where it should end, or delete the section"
            ).format(line=begin + 1, end=END)
        )
    return begin, end


def blocks_in(text: str) -> dict[str, list[str]]:
    """The section's blocks by alias (their lines as written), in order; {} without a section."""
    lines = _lines(text)
    span = _find(lines)
    if span is None:
        return {}
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[span[0] + 1 : span[1]]:
        m = _HOST_LINE.match(line)
        if m:
            alias = m.group(1).strip()
            current = None if alias == "*" else out.setdefault(alias, [])
        if current is not None:
            current.append(line)
    for lines in out.values():
        while lines and not lines[-1].strip():
            lines.pop()
    return out


def user_aliases(text: str) -> set[str]:
    """Concrete aliases on the user's own `Host` lines (outside the section), lower-cased.

    Only this file is read (an Include is not followed): a name the user defines here already
    is theirs, and gpu-tui writes no second block for it."""
    lines = _lines(text)
    span = _find(lines)
    outside = lines if span is None else lines[: span[0]] + lines[span[1] + 1 :]
    found: set[str] = set()
    for line in outside:
        m = _HOST_LINE.match(line)
        if m:
            words = m.group(1).split()
            ends = next((i for i, w in enumerate(words) if w.startswith("#")), len(words))  # a comment
            found.update(w.lower() for w in words[:ends] if not any(c in w for c in "*?!"))
    return found


def _section(blocks: dict[str, list[str]]) -> list[str]:
    body: list[str] = [BEGIN]
    for lines in blocks.values():
        body += lines
        body.append("")
    body += ["Host *", END]
    return body


def _lines(text: str) -> list[str]:
    """The file's lines, split at `\n` only: a user's `\r\n` ends, form feeds and other
    characters str.splitlines() would also split at come back as they were."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _join(lines: list[str], newline_at_end: bool) -> str:
    return "\n".join(lines) + ("\n" if newline_at_end and lines else "")


def splice(text: str, blocks: Sequence[HostBlock], *, replace_all: bool = False) -> str:
    """`text` with these blocks in the section: added, or replacing a block of the same alias;
    other blocks in the section stay unless `replace_all`. The section is created at the top."""
    lines = _lines(text)
    span = _find(lines)
    kept = {} if replace_all else blocks_in(text)
    for block in blocks:
        kept[block.alias] = render_block(block)
    section = _section(kept)
    if span is None:
        rest = lines
        out = section + ([""] if rest else []) + rest
    else:
        out = lines[: span[0]] + section + lines[span[1] + 1 :]
    return _join(out, True)


def remove_block(text: str, aliases: Sequence[str] | None) -> tuple[str, list[str]]:
    """`text` without these aliases' blocks (None: without the whole section, markers included),
    and the aliases actually removed. An emptied section goes away entirely."""
    lines = _lines(text)
    span = _find(lines)
    if span is None:
        return text, []
    blocks = blocks_in(text)
    if aliases is None:
        removed, left = list(blocks), {}
    else:
        removed = [a for a in aliases if a in blocks]
        left = {a: b for a, b in blocks.items() if a not in removed}
    if left:
        out = lines[: span[0]] + _section(left) + lines[span[1] + 1 :]
    else:
        after = lines[span[1] + 1 :]
        if after[:1] == [""] and span[0] == 0:
            after = after[1:]  # the blank line splice put after a section at the top
        out = lines[: span[0]] + after
    return _join(out, text.endswith("\n") or not text), removed
