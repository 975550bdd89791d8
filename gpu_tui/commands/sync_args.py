"""Arguments of `gpu-tui sync`, and recognising the hidden `_transport` call rsync makes (`-e`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

__all__ = ["TRANSPORT_COMMAND", "add_sync_parser", "is_transport"]

TRANSPORT_COMMAND = "_transport"
"""`gpu-tui [--config CFG] _transport NAME HOST CMD...`: rsync's remote shell (not for people)."""

SYNC_EPILOG = """\
paths: LOCAL defaults to the instance's sync.local, else the current directory; REMOTE to
sync.remote, else workdir, else the remote home (a relative REMOTE is relative to the remote
home). push makes REMOTE hold the contents of LOCAL, pull makes LOCAL hold the contents of
REMOTE (like rsync with a trailing slash on the source). Excludes come from sync.exclude.

Nothing is ever deleted on the receiving side: files that exist only there stay.

rsync (delta transfer, -z, --partial-dir, --timeout) runs over gpu-tui's own SSH login with the
stored credentials; where either side has no rsync (or with --sftp) files go over SFTP instead,
skipping those whose size and time already match and resuming unfinished ones.
Exit: 0 done, 2 refused (bad direction, missing LOCAL...), 3 the instance or the transfer failed.
"""


def add_sync_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sync = sub.add_parser(
        "sync",
        help="push / pull a directory (rsync with the stored credentials; SFTP fallback); never deletes",
        description="Copy a directory to or from an instance. Never deletes files on the receiving side.",
        epilog=SYNC_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sync.add_argument("name", metavar="NAME")
    # checked by the command, not argparse `choices`: a wrong word gets one clear line
    sync.add_argument("direction", metavar="push|pull")
    sync.add_argument("local", nargs="?", metavar="LOCAL", help="local directory")
    sync.add_argument("remote", nargs="?", metavar="REMOTE", help="directory on the instance")
    sync.add_argument("--sftp", action="store_true", help="use SFTP even where rsync exists on both sides")
    sync.add_argument("-n", "--dry-run", action="store_true", help="show what would be sent; change nothing")
    sync.add_argument("--json", action="store_true", help="print the summary as JSON")
    sync.add_argument("--bwlimit", type=_kib, metavar="KIB", help="limit the transfer to KIB KiB/s")
    sync.usage = "gpu-tui sync NAME push|pull [LOCAL] [REMOTE] [--sftp] [--dry-run] [--json] [--bwlimit KIB]"


def _kib(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--bwlimit wants KiB/s as a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("--bwlimit must be at least 1 KiB/s")
    return value


def is_transport(words: Sequence[str]) -> bool:
    """True for exactly the command lines `-e` builds: `[--config CFG] _transport NAME ...`."""
    w = list(words)
    if w[:1] and w[0].startswith("--config="):
        w = w[1:]
    elif w[:1] == ["--config"]:
        w = w[2:]
    return len(w) >= 2 and w[0] == TRANSPORT_COMMAND
