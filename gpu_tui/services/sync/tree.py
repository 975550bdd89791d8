"""The two sides of an SFTP sync as trees: files (size, mtime, mode), directories, unfinished
partials and skipped symlinks, with the excludes applied (an excluded directory is not entered).

The local walk is plain blocking `os.scandir` (run it in a thread); the remote one lists a whole
level of directories at once, at most LISTINGS at a time (each listing is a round trip).
"""

from __future__ import annotations

import asyncio
import os
import posixpath
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field

import asyncssh

from gpu_tui.core.syncplan import PARTIAL_SUFFIX, Excludes, is_partial

__all__ = ["LISTINGS", "FileInfo", "Tree", "local_path", "local_tree", "remote_tree"]

LISTINGS = 16
"""Directory listings in flight at once."""


@dataclass(frozen=True)
class FileInfo:
    """A regular file: `/`-separated path from the transfer root, size, mtime, st_mode."""

    rel: str
    size: int
    mtime: float
    mode: int


@dataclass
class Tree:
    """One side of the transfer."""

    files: dict[str, FileInfo] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)
    partials: dict[str, int] = field(default_factory=dict)
    """target rel path -> size of its partial."""
    links: int = 0


def _join(reldir: str, name: str) -> str:
    return f"{reldir}/{name}" if reldir else name


def local_path(root: str, rel: str) -> str:
    return os.path.join(root, *rel.split("/")) if rel else root


def local_tree(root: str, ex: Excludes) -> Tree:
    tree, stack = Tree(), [""]
    while stack:
        reldir = stack.pop()
        with os.scandir(local_path(root, reldir)) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            rel = _join(reldir, e.name)
            if e.is_symlink():
                tree.links += not ex.excluded(rel, False)
            elif e.is_dir():
                if not ex.excluded(rel, True):
                    tree.dirs.append(rel)
                    stack.append(rel)
            elif e.is_file():
                st = e.stat()
                if is_partial(e.name):
                    tree.partials[_join(reldir, e.name[1 : -len(PARTIAL_SUFFIX)])] = st.st_size
                elif not ex.excluded(rel, False):
                    tree.files[rel] = FileInfo(rel, st.st_size, st.st_mtime, st.st_mode)
    tree.dirs.sort()
    return tree


async def remote_tree(sftp: asyncssh.SFTPClient, root: str, ex: Excludes) -> Tree:
    """Breadth first, one level's directories listed at once (each listing is a round trip)."""
    tree, level = Tree(), [""]
    gate = asyncio.Semaphore(LISTINGS)

    async def listing(d: str) -> Sequence[asyncssh.SFTPName]:
        async with gate:
            return await sftp.readdir(posixpath.join(root, d) if d else root)

    while level:
        listings = await asyncio.gather(*(listing(d) for d in level))
        next_level: list[str] = []
        for reldir, names in zip(level, listings, strict=True):
            for n in sorted(names, key=lambda n: str(n.filename)):
                name = str(n.filename)
                if name in (".", ".."):
                    continue
                rel, a = _join(reldir, name), n.attrs
                mode = a.permissions or 0
                if a.type == asyncssh.FILEXFER_TYPE_SYMLINK or stat.S_ISLNK(mode):
                    tree.links += not ex.excluded(rel, False)
                elif a.type == asyncssh.FILEXFER_TYPE_DIRECTORY or stat.S_ISDIR(mode):
                    if not ex.excluded(rel, True):
                        tree.dirs.append(rel)
                        next_level.append(rel)
                elif a.type == asyncssh.FILEXFER_TYPE_REGULAR or stat.S_ISREG(mode):
                    if is_partial(name):
                        tree.partials[_join(reldir, name[1 : -len(PARTIAL_SUFFIX)])] = a.size or 0
                    elif not ex.excluded(rel, False):
                        tree.files[rel] = FileInfo(rel, a.size or 0, float(a.mtime or 0), mode)
        level = next_level
    tree.dirs.sort()
    return tree
