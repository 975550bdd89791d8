"""Find conda on an instance and list its environments, without `conda activate`.

Over a non-interactive SSH command `~/.bashrc` returns early, so conda is usually not on PATH
even though it works in the user's terminal (FIELD_NOTES.md): look where installers put it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from gpu_tui.core.env.condaenvs import env_names, parse_env_list_json, parse_env_list_text
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.jobs import ENV_NAME_RE
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import quote, sh_c

__all__ = [
    "CondaInstall",
    "find_conda",
    "conda_envs",
    "resolve_env",
    "FIND_CONDA_SCRIPT",
    "check_env_name",
    "env_pythons",
    "env_sizes",
    "env_python_line",
    "env_size_line",
    "create_command",
    "remove_command",
    "install_command",
    "init_command",
]

# Every place FIELD_NOTES lists, in that order; the first executable one wins.
FIND_CONDA_SCRIPT = r"""
for c in "$CONDA_EXE" "$(command -v conda 2>/dev/null)" \
  "$HOME/miniconda3/bin/conda" "$HOME/anaconda3/bin/conda" "$HOME/miniforge3/bin/conda" \
  "$HOME/mambaforge/bin/conda" /root/miniconda3/bin/conda /root/anaconda3/bin/conda \
  /opt/conda/bin/conda /usr/local/miniconda3/bin/conda /usr/local/anaconda3/bin/conda; do
  case "$c" in /*) [ -x "$c" ] && { echo "$c"; exit 0; } ;; esac
done
exit 1
"""


@dataclass(frozen=True, slots=True)
class CondaInstall:
    """Where conda lives on an instance, and its environments by name."""

    exe: str
    """Absolute path of the `conda` executable."""
    envs: dict[str, str]
    """Environment name -> prefix; the root prefix is `base`."""

    @property
    def root(self) -> str:
        return posixpath.dirname(posixpath.dirname(self.exe))


async def find_conda(host: Host) -> str | None:
    """The conda executable's path, or None where there is no conda."""
    res = await host.run(sh_c(FIND_CONDA_SCRIPT), timeout=15)
    path = res.stdout.strip().splitlines()[-1] if res.ok and res.stdout.strip() else ""
    return path or None


async def conda_envs(host: Host) -> CondaInstall | None:
    """conda and its environments, or None where there is no conda.

    `conda env list --json` first; its text form when the JSON is unreadable (a plugin or an
    activation script printing to stdout breaks it)."""
    exe = await find_conda(host)
    if exe is None:
        return None
    root = posixpath.dirname(posixpath.dirname(exe))
    res = await host.run(f"{quote(exe)} env list --json", timeout=60)
    prefixes = parse_env_list_json(res.stdout) if res.ok else None
    if prefixes is None:
        text = await host.run(f"{quote(exe)} env list", timeout=60)
        entries = parse_env_list_text(text.stdout) if text.ok else []
        if not entries:
            why = (res.stderr or text.stderr).strip()[:200] or _("no output")
            raise RemoteError(
                _("{name}: `conda env list` gave no environment list ({error})").format(name=host.name, error=why)
            )
        prefixes = [e.prefix for e in entries]
    return CondaInstall(exe=exe, envs=env_names(prefixes, root))


async def resolve_env(host: Host, name: str) -> str:
    """The prefix of conda env `name`; InputError (before anything runs) if it does not exist."""
    check_env_name(name)
    install = await conda_envs(host)
    if install is None:
        raise InputError(
            _("{instance}: --env {env}: no conda found on the instance (looked in {places})").format(
                instance=host.name, env=name, places="$CONDA_EXE, PATH, ~/miniconda3, ~/anaconda3, /opt/conda"
            )
        )
    if name not in install.envs:
        create = f"gpu-tui conda {host.name} create {name} --python 3.11"
        if not install.envs:
            raise InputError(
                _("{instance}: no conda env {env!r} (there are: none); create it with `{command}`").format(
                    instance=host.name, env=name, command=create
                )
            )
        raise InputError(
            _("{instance}: no conda env {env!r} (there are: {known}); create it with `{command}`").format(
                instance=host.name, env=name, known=", ".join(sorted(install.envs)), command=create
            )
        )
    return install.envs[name]


PKG_SPEC_RE = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._\-]*"  # the name
    r"(\[[A-Za-z0-9,._\-]+\])?"  # [extras]
    r"([=<>!~]=?[A-Za-z0-9.*+!_\-]+(,[=<>!~]=?[A-Za-z0-9.*+!_\-]+)*)?$"  # version constraints
)
PYTHON_RE = re.compile(r"^[23](\.\d{1,2}){0,2}$")


def check_env_name(name: str) -> None:
    if not ENV_NAME_RE.match(name):
        raise InputError(_("conda env name {env!r}: use letters, digits, '.', '_' and '-' only").format(env=name))


async def env_pythons(host: Host, install: CondaInstall) -> dict[str, str | None]:
    """Each env's python version (None for an env without python), in one exec."""
    script = "".join(env_python_line(name, prefix) for name, prefix in install.envs.items())
    res = await host.run(sh_c(script), timeout=60)
    out: dict[str, str | None] = {name: None for name in install.envs}
    for line in res.stdout.splitlines():
        name, _tab, version = line.partition("\t")
        parts = version.split()
        if name in out and len(parts) == 2 and parts[0] == "Python":
            out[name] = parts[1]
    return out


async def env_sizes(host: Host, install: CondaInstall, *, timeout: float = 120) -> dict[str, int | None]:
    """Each env's size on disk in bytes (None where `du` could not tell), in one exec.

    base is measured without `envs/` and `pkgs/` (the other envs and the package cache) where
    `du --exclude` exists; hard links shared between envs count in the first env measured."""
    script = "".join(env_size_line(name, prefix, base=name == "base") for name, prefix in install.envs.items())
    res = await host.run(sh_c(script), timeout=timeout)
    out: dict[str, int | None] = {name: None for name in install.envs}
    for line in res.stdout.splitlines():
        name, _tab, kib = line.partition("\t")
        if name in out and kib.strip().isdigit():
            out[name] = int(kib.strip()) * 1024
    return out


def env_python_line(name: str, prefix: str) -> str:
    """env_pythons' script line for one env: `NAME<TAB>Python 3.x.y`, or `NAME<TAB>` without python."""
    q = quote(prefix)
    return (
        f'printf "%s\\t" {quote(name)}; if [ -x {q}/bin/python ]; '
        f"then {q}/bin/python --version 2>&1 | head -n 1; else echo; fi\n"
    )


def env_size_line(name: str, prefix: str, *, base: bool) -> str:
    """env_sizes' script line for one env: `NAME<TAB>KIB` (`NAME<TAB>` where du fails); the
    `base` env without the other envs and the package cache where `du --exclude` exists."""
    q = quote(prefix)
    if base:
        du = f"du -sk --exclude={q}/envs --exclude={q}/pkgs {q} 2>/dev/null || du -sk {q}"
    else:
        du = f"du -sk {q}"
    return f'printf "%s\\t" {quote(name)}; ({du}) 2>/dev/null | head -n 1 | cut -f 1; true\n'


def create_command(install: CondaInstall, name: str, python: str) -> str:
    check_env_name(name)
    if not PYTHON_RE.match(python):
        raise InputError(_("--python {version!r}: give a version like 3.11").format(version=python))
    if name in install.envs:
        raise InputError(
            _("conda env {env!r} already exists ({path}); remove it first to recreate it").format(
                env=name, path=install.envs[name]
            )
        )
    # -y: a prompt would wait forever on a non-interactive channel
    return f"{quote(install.exe)} create -n {quote(name)} python={quote(python)} -y 2>&1"


def remove_command(install: CondaInstall, name: str) -> str:
    check_env_name(name)
    if name == "base":
        raise InputError(_("the base env cannot be removed"))
    if name not in install.envs:
        raise InputError(
            _("no conda env {env!r} (there are: {known})").format(env=name, known=", ".join(sorted(install.envs)))
        )
    return f"{quote(install.exe)} env remove -n {quote(name)} -y 2>&1"


def install_command(install: CondaInstall, env: str, packages: list[str], *, pip: bool) -> str:
    check_env_name(env)
    if env not in install.envs:
        raise InputError(
            _("no conda env {env!r} (there are: {known})").format(env=env, known=", ".join(sorted(install.envs)))
        )
    if not packages:
        raise InputError(_("name the packages to install"))
    for pkg in packages:
        if not PKG_SPEC_RE.match(pkg):
            bad = _("package {package!r}: not a package name or spec (like torch==2.4.1 or numpy>=2)")
            raise InputError(bad.format(package=pkg))
    words = " ".join(quote(p) for p in packages)
    if pip:
        return f"{quote(install.envs[env])}/bin/python -m pip install {words} 2>&1"
    return f"{quote(install.exe)} install -n {quote(env)} -y {words} 2>&1"


def init_command(install: CondaInstall) -> str:
    return f"{quote(install.exe)} init bash 2>&1"
