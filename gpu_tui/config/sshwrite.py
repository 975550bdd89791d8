"""Write gpu-tui's section of `~/.ssh/config` (core/sshsection.py makes the text).

The file is replaced atomically with mode 600 (OpenSSH refuses a config others can write), and
`~/.ssh` is made with mode 700 when it does not exist yet. Reading the user's config for
`add --from-ssh-config` is config/sshconfig.py's job; this module only writes its own section.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gpu_tui.config.atomicfile import SECRET_MODE, write_atomic
from gpu_tui.config.paths import Paths
from gpu_tui.config.settings import InstanceConfig
from gpu_tui.config.sshconfig import SshConfigHost
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.sshsection import HostBlock, remove_block, splice

__all__ = ["host_block", "read_config_text", "write_blocks", "remove_blocks", "DEFAULT_KEYS"]

DEFAULT_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")
"""The keys OpenSSH offers when no IdentityFile is named; gpu-tui offers them too
(remote/ssh.py), so a block that names the app key lists those that exist after it."""


def host_block(inst: InstanceConfig, paths: Paths, via: SshConfigHost | None = None) -> HostBlock:
    """The block for one instance: its own key where it names one, else gpu-tui's app key and
    the default keys that exist; host keys from the user's known_hosts and gpu-tui's own.
    Paths are absolute: OpenSSH expands `~` from the passwd entry, not from $HOME.

    `via`: the user's own `Host` entry that the instance's host names. OpenSSH does not look
    Host entries up again by HostName, so the block carries that entry's HostName (and its
    IdentityFile where the instance names none), as gpu-tui's own login reads them."""
    identity = inst.identity_file or (via.identity_file if via else None)
    if identity:
        keys: tuple[str, ...] = (str(Path(identity).expanduser()) if identity.startswith("~") else identity,)
    else:
        ssh_dir = paths.user_known_hosts.parent
        defaults = [str(ssh_dir / k) for k in DEFAULT_KEYS if (ssh_dir / k).is_file()]
        keys = (str(paths.app_key), *defaults)
    return HostBlock(
        alias=inst.name,
        hostname=via.hostname if via else inst.host,
        port=inst.port,
        user=inst.user,
        identity_files=keys,
        known_hosts=(str(paths.user_known_hosts), str(paths.app_known_hosts)),
    )


def read_config_text(path: Path) -> str:
    """The file's text, "" when it does not exist; an unreadable one is an InputError."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(_("{path}: cannot read it: {error}").format(path=path, error=exc)) from None


def _write(path: Path, text: str) -> None:
    # a symlinked ~/.ssh/config (a dotfile manager's): replace the file it points to, keep the link
    path = path.resolve() if path.is_symlink() else path
    if not path.parent.is_dir():
        path.parent.mkdir(mode=0o700, parents=True)
    try:
        write_atomic(path, text, mode=SECRET_MODE)
    except OSError as exc:
        raise InputError(_("{path}: cannot write it: {error}").format(path=path, error=exc.strerror or exc)) from None


def write_blocks(path: Path, blocks: Sequence[HostBlock], *, replace_all: bool = False) -> str:
    """Put the blocks in the section of `path` (atomically, mode 600); the new text."""
    text = splice(read_config_text(path), blocks, replace_all=replace_all)
    _write(path, text)
    return text


def remove_blocks(path: Path, aliases: Sequence[str] | None) -> list[str]:
    """Take these aliases' blocks (None: the whole section) out of `path`; the aliases removed.
    The file is not rewritten when nothing was there."""
    old = read_config_text(path)
    new, removed = remove_block(old, aliases)
    if new != old:
        _write(path, new)
    return removed
