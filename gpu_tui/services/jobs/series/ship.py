"""Ship the series summariser to an instance: `<state_dir>/bin/series-v1.sh` and `bin/series-v1/`
(summariser.py, runfiles.py, VERSION, and gpu-tui's log rules and run-file readers in `core/`,
rewritten for an older python3 by services/notify/bundle.py, as the notification sender's are).

VERSION is a hash of every shipped file: a client that finds another one (an older or newer
gpu-tui shipped it) ships its own. A summariser running meanwhile keeps the files it loaded; its
saved state names the rules it was written with, so the new one reads the log again from 0.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import logging
import secrets
from importlib import resources

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import fill_script, sh_c
from gpu_tui.services.notify.bundle import portable_core
from gpu_tui.services.statedir import shell_state_dir

__all__ = [
    "ROOTS",
    "ENTRY",
    "DIR",
    "bundle_files",
    "version",
    "install_series",
    "ensure_series",
    "ensure_series_quietly",
]

log = logging.getLogger(__name__)

ROOTS = (
    "gpu_tui.core.trainlog.series",
    "gpu_tui.core.trainlog.overview",
    "gpu_tui.core.runfiles.discover",
    "gpu_tui.core.runfiles.tfevents",
    "gpu_tui.core.runfiles.trainer_state",
    "gpu_tui.core.runfiles.lightning_csv",
    "gpu_tui.core.runfiles.mlflow",
)
"""The log rules, the overview kept beside the points, and the readers of a run's own files
(runfiles.py calls them)."""
ENTRY = "series-v1.sh"
DIR = "series-v1"


@functools.cache
def _files() -> dict[str, str]:
    """Built once per process: the rules' rewriting costs ~0.2 s, and every `metrics` call names the
    version it wants."""
    pkg = resources.files("gpu_tui.services.jobs.series")
    files = {
        ENTRY: pkg.joinpath("series.sh").read_text(encoding="utf-8"),
        f"{DIR}/summariser.py": pkg.joinpath("summariser.py").read_text(encoding="utf-8"),
        f"{DIR}/runfiles.py": pkg.joinpath("runfiles.py").read_text(encoding="utf-8"),
    }
    files.update({f"{DIR}/core/{name}": text for name, text in portable_core(ROOTS).items()})
    return files


@functools.cache
def version() -> str:
    """A hash of the shipped files: what `bin/series-v1/VERSION` holds once they are there."""
    digest = hashlib.sha256()
    for name, text in sorted(_files().items()):
        digest.update(name.encode() + b"\0" + text.encode("utf-8") + b"\0")
    return digest.hexdigest()[:16]


def bundle_files() -> dict[str, str]:
    """{path under bin/: text} of everything shipped, VERSION last (it says the rest is there)."""
    files = dict(_files())
    files[f"{DIR}/VERSION"] = version() + "\n"
    return files


def _put(path: str, text: str) -> str:
    """A shell line writing `text` to `path` through stdin (a heredoc), replacing it atomically."""
    mark = "GPUTUI_" + secrets.token_hex(8)
    data = base64.encodebytes(text.encode("utf-8")).decode("ascii")
    return f'base64 -d > "{path}.tmp" <<\'{mark}\'\n{data}{mark}\nmv -f "{path}.tmp" "{path}"\n'


def install_script(state: str) -> str:
    """The `sh -s` script (on stdin) that writes the bundle under `<state>/bin/` (a shell word)."""
    lines = ["set -e", "umask 077", f"s={state}", f'mkdir -p "$s/bin/{DIR}/core"']
    lines += [_put(f"$s/bin/{name}", text) for name, text in bundle_files().items()]
    lines.append("echo installed")
    return "\n".join(lines)


async def install_series(host: Host, inst: InstanceConfig) -> None:
    """Write the summariser and its rules to the instance (RemoteError if it cannot)."""
    res = await host.run("sh -s", stdin=install_script(shell_state_dir(inst)), timeout=60)
    if not res.ok or "installed" not in res.stdout:
        raise RemoteError(
            _("{name}: cannot install the series summariser: {error}").format(
                name=inst.name, error=(res.stderr or res.stdout).strip()[:300]
            )
        )


_VERSION_OF = r"""
v=; [ -f __STATE__/bin/__DIR__/VERSION ] && read -r v < __STATE__/bin/__DIR__/VERSION
echo "version $v"
"""


async def ensure_series(host: Host, inst: InstanceConfig) -> None:
    """Ship the summariser unless the instance already has this version (RemoteError if it cannot)."""
    state = shell_state_dir(inst)
    res = await host.run(sh_c(fill_script(_VERSION_OF, STATE=state, DIR=DIR)), timeout=30)
    if res.ok and res.stdout.strip() == f"version {version()}":
        return
    await install_series(host, inst)


async def ensure_series_quietly(host: Host, inst: InstanceConfig) -> None:
    """`ensure_series` before a job starts: a job starts without it (`metrics` ships it later)."""
    try:
        await ensure_series(host, inst)
    except (RemoteError, OSError) as exc:
        log.warning("%s: series summariser not shipped: %s", inst.name, exc)
