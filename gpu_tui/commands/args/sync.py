"""Arguments of `gpu-tui sync`, and recognising the hidden `_transport` call rsync makes (`-e`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from gpu_tui.commands.support.helpformat import CellRawDescriptionHelpFormatter
from gpu_tui.core.i18n import N_, _

__all__ = ["TRANSPORT_COMMAND", "add_sync_parser", "is_transport"]

TRANSPORT_COMMAND = "_transport"
"""`gpu-tui [--config CFG] _transport NAME HOST CMD...`: rsync's remote shell (not for people)."""

SYNC_EPILOG = N_("""\
paths: LOCAL defaults to the instance's sync.local, else the current directory; REMOTE to
sync.remote, else workdir, else the remote home (a relative REMOTE is relative to the remote
home). push makes REMOTE hold the contents of LOCAL, pull makes LOCAL hold the contents of
REMOTE (like rsync with a trailing slash on the source). Excludes come from sync.exclude.

Nothing is ever deleted on the receiving side: files that exist only there stay.

rsync (delta transfer, -z, --partial-dir, --timeout) runs over gpu-tui's own SSH login with the
stored credentials; where either side has no rsync (or with --sftp) files go over SFTP instead,
skipping those whose size and time already match and resuming unfinished ones.
Exit: 0 done, 2 refused (bad direction, missing LOCAL...), 3 the instance or the transfer failed.
""")
"""Wrapped by hand (shown as written): a translation keeps its lines within 80 cells."""


def add_sync_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sync = sub.add_parser(
        "sync",
        help=_("push / pull a directory (rsync with the stored credentials; SFTP fallback); never deletes"),
        description=_("Copy a directory to or from an instance. Never deletes files on the receiving side."),
        epilog=_(SYNC_EPILOG),
        formatter_class=CellRawDescriptionHelpFormatter,
    )
    sync.add_argument("name", metavar="NAME", help=_("the instance"))
    # checked by the command, not argparse `choices`: a wrong word gets one clear line
    sync.add_argument("direction", metavar="push|pull", help=_("push: to the instance; pull: from it"))
    sync.add_argument("local", nargs="?", metavar="LOCAL", help=_("local directory"))
    sync.add_argument("remote", nargs="?", metavar="REMOTE", help=_("directory on the instance"))
    sync.add_argument("--sftp", action="store_true", help=_("use SFTP even where rsync exists on both sides"))
    sync.add_argument("-n", "--dry-run", action="store_true", help=_("show what would be sent; change nothing"))
    sync.add_argument("--json", action="store_true", help=_("print the summary as JSON"))
    sync.add_argument("--bwlimit", type=_kib, metavar="KIB", help=_("limit the transfer to KIB KiB/s"))
    sync.usage = "gpu-tui sync NAME push|pull [LOCAL] [REMOTE] [--sftp] [--dry-run] [--json] [--bwlimit KIB]"


def _kib(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("--bwlimit wants KiB/s as a whole number, got {text!r}").format(text=text)
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(_("--bwlimit must be at least 1 KiB/s"))
    return value


def is_transport(words: Sequence[str]) -> bool:
    """True for exactly the command lines `-e` builds: `[--config CFG] _transport NAME ...`."""
    w = list(words)
    if w[:1] and w[0].startswith("--config="):
        w = w[1:]
    elif w[:1] == ["--config"]:
        w = w[2:]
    return len(w) >= 2 and w[0] == TRANSPORT_COMMAND
