"""Set conda's channels and pip's index on an instance to a mirror, and put them back.

The files are `~/.condarc` and pip's user config `${XDG_CONFIG_HOME:-~/.config}/pip/pip.conf`
(pip reads the legacy `~/.pip/pip.conf` first and this one after it, so this one wins). Before
the first change each file is copied to `<state_dir>/mirror-backup/` (or its absence noted
there); switching from one mirror to another keeps that first backup, and `default` restores
it. Without a backup `default` takes only the mirror keys out. New contents travel on stdin.
Whether the mirror answers from the instance is asked afterwards, with a short timeout, and
only warned about: the configuration is written either way.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace

from gpu_tui.core.env.mirrors import (
    MIRRORS,
    IndexAnswer,
    condarc_with,
    condarc_without,
    parse_probe_lines,
    pip_conf_with,
    pip_conf_without,
    probe_path,
)
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import quote, remote_path, sh_c

__all__ = ["MirrorResult", "IndexAnswer", "set_mirror", "probe_urls", "PIP_CONF", "CONDARC", "PROBE_TIMEOUT"]

CONDARC = '"$HOME/.condarc"'
PIP_CONF = '"${XDG_CONFIG_HOME:-$HOME/.config}/pip/pip.conf"'
PROBE_TIMEOUT = 4.0
"""Seconds one index may take to answer before it counts as not answering."""

_READ = 'f={path}; if [ -f "$f" ]; then cat "$f"; else exit 3; fi'
# the first change keeps what was there; a tmp file beside the target makes the write atomic
_WRITE = """set -e
umask 077
f={path}; bk={backup}; name={name}
# a symlinked dotfile (stow, chezmoi, home-manager): write the file it points to, keep the link
[ -L "$f" ] && f=$(readlink -f "$f")
mkdir -p "$bk"
if [ ! -e "$bk/$name" ] && [ ! -e "$bk/$name.absent" ]; then
  if [ -f "$f" ]; then cp -p "$f" "$bk/$name"; else : > "$bk/$name.absent"; fi
fi
mkdir -p "$(dirname "$f")"
if [ -f "$f" ]; then cp -p "$f" "$f.gpu-tui.tmp"; fi
cat > "$f.gpu-tui.tmp"
mv "$f.gpu-tui.tmp" "$f"
echo "$f"
"""
_RESTORE = """set -e
f={path}; bk={backup}; name={name}
# a symlinked dotfile (stow, chezmoi, home-manager): write the file it points to, keep the link
[ -L "$f" ] && f=$(readlink -f "$f")
if [ -e "$bk/$name" ]; then
  cp -p "$bk/$name" "$f.gpu-tui.tmp"; mv "$f.gpu-tui.tmp" "$f"; rm -f "$bk/$name"; echo restored
elif [ -e "$bk/$name.absent" ]; then rm -f "$f" "$bk/$name.absent"; echo removed
else echo none; fi
rmdir "$bk" 2>/dev/null || true
"""
_STRIP = """set -e
f={path}
[ -L "$f" ] && f=$(readlink -f "$f")
cp -p "$f" "$f.gpu-tui.tmp"; cat > "$f.gpu-tui.tmp"; mv "$f.gpu-tui.tmp" "$f"
"""

_PROBE_PY = """
import json, sys, time, urllib.request, urllib.error
from concurrent.futures import ThreadPoolExecutor
def ask(url):
    t = time.monotonic()
    try:
        r = urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=float(sys.argv[1]))
        status, error = r.status, None
    except urllib.error.HTTPError as e:
        status, error = e.code, None
    except Exception as e:
        status, error = None, (type(e).__name__ + ": " + str(getattr(e, "reason", e)))[:160]
    return {"url": url, "status": status, "ms": round((time.monotonic() - t) * 1000), "error": error}
with ThreadPoolExecutor(8) as pool:
    for row in pool.map(ask, sys.argv[2:]):
        print(json.dumps(row))
"""
# without python3: curl prints the status and the total time
_PROBE_SH = """t=$1; shift
if command -v python3 >/dev/null 2>&1; then exec python3 -c {py} "$t" "$@"; fi
if ! command -v curl >/dev/null 2>&1; then echo "@@none"; exit 0; fi
for u in "$@"; do
  out=$(curl -sS -o /dev/null -I -m "$t" -w '%{{http_code}} %{{time_total}}' "$u" 2>&1) || true
  echo "@@curl $u $out"
done
"""


@dataclass
class MirrorResult:
    mirror: str
    written: list[str] = field(default_factory=list)
    """What changed, in words (`~/.condarc: restored`...)."""
    answers: list[IndexAnswer] = field(default_factory=list)


def _backup_dir(state_dir: str) -> str:
    return remote_path(posixpath.join(state_dir, "mirror-backup"))


async def _read(host: Host, path: str) -> str | None:
    res = await host.run(sh_c(_READ.format(path=path)), timeout=30)
    if res.exit_status == 3:
        return None
    if not res.ok:
        raise RemoteError(
            _("{name}: cannot read {path}: {error}").format(
                name=host.name, path=path, error=(res.stderr or res.stdout).strip()[:200]
            )
        )
    return res.stdout


async def _script(host: Host, script: str, stdin: str | None = None) -> str:
    res = await host.run(sh_c(script), stdin=stdin, timeout=30)
    if not res.ok:
        raise RemoteError(
            _("{name}: could not change the package config: {error}").format(
                name=host.name, error=(res.stderr or res.stdout).strip()[:200] or res.exit_status
            )
        )
    return res.stdout.strip()


async def set_mirror(host: Host, state_dir: str, mirror: str, *, probe_timeout: float = PROBE_TIMEOUT) -> MirrorResult:
    """Point conda and pip at `mirror` (a MIRRORS name) or put back what was there (`default`)."""
    result = MirrorResult(mirror)
    backup = _backup_dir(state_dir)
    files = (("condarc", CONDARC, "~/.condarc"), ("pip.conf", PIP_CONF, "pip.conf"))
    for name, path, shown in files:
        old = await _read(host, path)
        if mirror == "default":
            done = await _script(host, _RESTORE.format(path=path, backup=backup, name=name))
            if done == "none" and old is not None:
                stripped = condarc_without(old) if name == "condarc" else pip_conf_without(old)
                if stripped != old:
                    await _script(host, _STRIP.format(path=path), stdin=stripped)
                    done = "cleared"
            words = {
                "restored": _("restored from the backup"),
                "removed": _("removed (there was none before)"),
                "cleared": _("mirror settings taken out"),
                "none": _("left as it was"),
            }
            result.written.append(f"{shown}: {words.get(done, done)}")
            continue
        m = MIRRORS[mirror]
        new = condarc_with(old or "", m) if name == "condarc" else pip_conf_with(old or "", m.pypi)
        where = await _script(host, _WRITE.format(path=path, backup=backup, name=name), stdin=new)
        result.written.append(where or shown)
    if mirror != "default":
        m = MIRRORS[mirror]
        result.answers = await probe_urls(
            host,
            [("conda", probe_path("conda", m.anaconda + "/pkgs/main")), ("pip", probe_path("pip", m.pypi))],
            timeout=probe_timeout,
        )
    return result


async def probe_urls(host: Host, urls: list[tuple[str, str]], *, timeout: float = PROBE_TIMEOUT) -> list[IndexAnswer]:
    """Ask each (tool, URL) with HEAD from the instance, in parallel, each within `timeout`
    seconds; [] when the instance has neither python3 nor curl."""
    if not urls:
        return []
    tools = dict((url, tool) for tool, url in urls)
    script = _PROBE_SH.format(py=quote(_PROBE_PY))
    command = sh_c(script) + " sh " + " ".join(quote(w) for w in [f"{timeout:g}", *tools])
    res = await host.run(command, timeout=timeout * 2 + 15)
    return [replace(a, tool=tools.get(a.url, "")) for a in parse_probe_lines(res.stdout)]
