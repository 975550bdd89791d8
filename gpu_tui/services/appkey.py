"""gpu-tui's own SSH key: made once on this machine, installed on an instance when the user asks,
so that later logins, the shell and rsync work without the password.
"""

from __future__ import annotations

from pathlib import Path

import asyncssh

from gpu_tui.config.atomicfile import SECRET_MODE, write_atomic
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import sh_c

__all__ = ["ensure_app_key", "install_public_key", "KEY_COMMENT"]

KEY_COMMENT = "gpu-tui"
"""The comment on the key's public line, so a user can tell it apart in authorized_keys."""
PUBLIC_MODE = 0o644
"""The public half's mode, as ssh-keygen leaves it."""

# Idempotent: the line is appended only when absent; permissions as sshd's StrictModes wants.
_INSTALL = r"""
umask 077
mkdir -p "$HOME/.ssh" && chmod 700 "$HOME/.ssh" || exit 1
IFS= read -r line || exit 1
touch "$HOME/.ssh/authorized_keys" && chmod 600 "$HOME/.ssh/authorized_keys" || exit 1
grep -qxF "$line" "$HOME/.ssh/authorized_keys" && { echo present; exit 0; }
printf '%s\n' "$line" >> "$HOME/.ssh/authorized_keys" && echo added
"""


def ensure_app_key(path: Path) -> str:
    """The public line of the key at `path`, generating an ed25519 key there first if needed."""
    pub = path.with_name(path.name + ".pub")
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        key = asyncssh.generate_private_key("ssh-ed25519", comment=KEY_COMMENT)
        write_atomic(path, key.export_private_key("openssh"), mode=SECRET_MODE)
        write_atomic(pub, key.export_public_key("openssh"), mode=PUBLIC_MODE)
    if not pub.is_file():
        write_atomic(pub, asyncssh.read_private_key(str(path)).export_public_key("openssh"), mode=PUBLIC_MODE)
    return pub.read_text(encoding="utf-8").strip()


async def install_public_key(host: Host, public_line: str) -> bool:
    """Append `public_line` to the instance's ~/.ssh/authorized_keys; False if it was there."""
    res = await host.run(sh_c(_INSTALL), stdin=public_line + "\n", timeout=30)
    if not res.ok:
        why = (res.stderr or res.stdout).strip()[:200] or _("exit {status}").format(status=res.exit_status)
        raise RemoteError(
            _("{name}: could not install gpu-tui's key in ~/.ssh/authorized_keys: {error}").format(
                name=host.name, error=why
            )
        )
    return res.stdout.strip() == "added"
