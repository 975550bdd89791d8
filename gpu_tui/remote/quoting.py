"""The one place that builds shell command lines sent to an instance.

Everything remote is data: a name, a path or a command word reaches the remote shell only
through these functions, so it arrives as one literal word.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

__all__ = ["quote", "join", "command_line", "sh_c", "remote_path", "fill_script"]


def quote(word: str) -> str:
    """One word for a POSIX shell, whatever it holds."""
    if "\x00" in word:
        raise ValueError("a shell word cannot contain a NUL byte")
    return shlex.quote(word)


def join(argv: Sequence[str]) -> str:
    """A command line whose words arrive exactly as given."""
    return " ".join(quote(w) for w in argv)


def command_line(words: Sequence[str]) -> str:
    """CONTRACTS.md `-- CMD...`: one word is a shell command line, several are quoted one by one."""
    if not words:
        raise ValueError("empty command")
    return words[0] if len(words) == 1 else join(words)


def sh_c(script: str) -> str:
    """Run `script` under POSIX sh whatever the login shell is (bash, zsh, dash)."""
    return "sh -c " + quote(script)


def remote_path(path: str) -> str:
    """A path for the remote shell: a leading `~/` becomes `"$HOME"/`, the rest is quoted."""
    if path == "~":
        return '"$HOME"'
    if path.startswith("~/"):
        rest = path[2:]
        return '"$HOME"/' + quote(rest) if rest else '"$HOME"/'
    return quote(path)


_SLOT = re.compile(r"__([A-Z]+)__")


def fill_script(template: str, **values: str) -> str:
    """A script template with its `__NAME__` slots filled with already-quoted words, in one
    pass (a value is never rescanned, so a value holding `__X__` stays as it is)."""
    return _SLOT.sub(lambda m: values.get(m[1], m[0]), template)
