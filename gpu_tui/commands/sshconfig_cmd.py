"""`gpu-tui ssh-config [NAME...] [--print] [--remove]` and `gpu-tui code NAME [PATH]`.

The blocks let OpenSSH log in as gpu-tui does: the instance's key, else gpu-tui's app key, and
only the host keys gpu-tui trusts. An instance that gpu-tui reaches with a stored password only
would get a block OpenSSH cannot use, so its key is installed first (asked, or `--install-key`);
the install is the one `add` uses (services/onboard.py).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
from collections.abc import Sequence

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from gpu_tui.commands.support.output import confirm
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.config.sshconfig import read_ssh_config
from gpu_tui.config.sshwrite import host_block, read_config_text, remove_blocks, write_blocks
from gpu_tui.core.errors import AuthFailed, GpuTuiError
from gpu_tui.core.i18n import _
from gpu_tui.core.sshsection import alias_problem, render_block, user_aliases
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.onboard import install_app_key

__all__ = ["run_ssh_config", "run_code", "vscode_authority"]


def _say(line: str) -> None:
    sys.stderr.write(f"gpu-tui: {line}\n")


def vscode_authority(alias: str) -> str:
    """`ssh-remote+ALIAS` as Remote-SSH writes it: VS Code lower-cases an authority, so
    Remote-SSH escapes capitals as `\\xNN` (docs/FIELD_NOTES.md, "Editors")."""
    return "ssh-remote+" + "".join(f"\\x{ord(c):02x}" if c.isupper() else c for c in alias)


async def _key_login_works(inst: InstanceConfig, settings: Settings, paths: Paths) -> bool:
    """Whether the instance takes a key login (what OpenSSH will try), without the password."""
    host = build_ssh_host(inst, settings, paths, SecretStore(environ={}))
    host.set_password(None)
    try:
        await host.connect()
    except AuthFailed:
        return False
    finally:
        await host.close()
    return True


async def _install_key(inst: InstanceConfig, settings: Settings, paths: Paths) -> None:
    host = build_ssh_host(inst, settings, paths, SecretStore())
    await host.connect()
    try:
        await install_app_key(host, paths)
    finally:
        await host.close()


def _offer_key(inst: InstanceConfig, settings: Settings, paths: Paths, install: bool) -> bool:
    """For a password-only instance: install gpu-tui's key (asked, or `install`); False when
    the block will not log in without a password."""
    if inst.identity_file or SecretStore().get_password(inst.name) is None:
        return True  # gpu-tui itself logs in with keys here, and so will OpenSSH
    try:
        if asyncio.run(_key_login_works(inst, settings, paths)):
            return True
    except GpuTuiError as exc:
        _say(
            _("{name}: could not test a key login ({error}); block written anyway").format(
                name=inst.name, error=exc.line()
            )
        )
        return False
    question = _(
        "{name} logs in with a password only; install gpu-tui's key there so ssh and editors need none?"
    ).format(name=inst.name)
    if not install and not (sys.stdin.isatty() and confirm(question)):
        _say(
            _(
                "{name}: logs in with a password only: `ssh {name}` will ask for it "
                "(run `gpu-tui ssh-config {name} --install-key` to install gpu-tui's key)"
            ).format(name=inst.name)
        )
        return False
    try:
        asyncio.run(_install_key(inst, settings, paths))
    except GpuTuiError as exc:
        _say(exc.line())
        return False
    print(_("{name}: gpu-tui's key installed in ~/.ssh/authorized_keys").format(name=inst.name))
    return True


def _chosen(settings: Settings, names: Sequence[str]) -> tuple[list[InstanceConfig], list[str]]:
    """The instances to write and the refusals; named ones are all checked first."""
    instances = [settings.instance(n) for n in names] if names else list(settings.instances)
    problems = [p for p in (alias_problem(i.name) for i in instances) if p]
    return [i for i in instances if alias_problem(i.name) is None], problems


def ensure_blocks(
    settings: Settings, paths: Paths, names: Sequence[str], *, install: bool, print_only: bool = False
) -> int:
    """Write (or print) the blocks; the exit code."""
    instances, problems = _chosen(settings, names)
    for problem in problems:
        _say(problem)
    if problems and names:
        return EXIT_USAGE  # a name the user typed cannot be an alias: nothing written
    theirs = user_aliases(read_config_text(paths.ssh_config))
    entries = {h.alias.lower(): h for h in read_ssh_config(paths.ssh_config)} if theirs else {}
    mine, blocks = [], []
    for inst in instances:
        if inst.name.lower() in theirs:
            _say(_("{name}: ~/.ssh/config already has your own `Host {name}`; left as it is").format(name=inst.name))
            continue
        via = entries.get(inst.host.lower()) if inst.host.lower() in theirs else None
        if via is not None:
            _say(
                _(
                    "{name}: its host {host} is your own Host entry; the block uses its HostName {hostname} "
                    "(options such as ProxyJump are not copied)"
                ).format(name=inst.name, host=inst.host, hostname=via.hostname)
            )
        mine.append(inst)
        blocks.append(host_block(inst, paths, via))
    if print_only:
        for block in blocks:
            print("\n".join(render_block(block)) + "\n")
        return EXIT_OK
    if not blocks:
        if not names:  # no instance left to write: no section either
            remove_blocks(paths.ssh_config, None)
        print(_("{path}: no Host blocks to write").format(path=paths.ssh_config))
        return EXIT_OK
    ready = all([_offer_key(i, settings, paths, install) for i in mine])
    write_blocks(paths.ssh_config, blocks, replace_all=not names)
    print(
        _("{path}: Host blocks for {names}; connect with `ssh {first}`, or pick it in VS Code / PyCharm").format(
            path=paths.ssh_config, names=", ".join(b.alias for b in blocks), first=blocks[0].alias
        )
    )
    return EXIT_OK if ready else EXIT_PARTIAL


def run_ssh_config(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    if args.remove:
        for name in args.names:
            settings.instance(name)  # an unknown name is a typo: say so
        removed = remove_blocks(paths.ssh_config, list(args.names) or None)
        if removed:
            print(_("{path}: removed the blocks of {names}").format(path=paths.ssh_config, names=", ".join(removed)))
        else:
            print(_("{path}: nothing of gpu-tui's to remove").format(path=paths.ssh_config))
        return EXIT_OK
    return ensure_blocks(settings, paths, list(args.names), install=args.install_key, print_only=args.print_only)


def run_code(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    inst = settings.instance(args.name)
    problem = alias_problem(inst.name)
    if problem:
        _say(problem)
        return EXIT_USAGE
    status = ensure_blocks(settings, paths, [inst.name], install=False)
    if status == EXIT_USAGE:
        return status
    code = shutil.which("code")
    path = args.path or inst.workdir
    if code is None:
        _say(
            _(
                'no `code` command on PATH: in VS Code run "Remote-SSH: Connect to Host..." and pick {name} '
                "(its block is in ~/.ssh/config), or log in with `ssh {name}`"
            ).format(name=inst.name)
        )
        return EXIT_USAGE
    argv = [code, "--remote", vscode_authority(inst.name)] + ([path] if path else [])
    try:
        done = subprocess.run(argv, check=False)
    except OSError as exc:
        _say(_("could not start {command}: {error}").format(command=code, error=exc.strerror or exc))
        return EXIT_PARTIAL
    return EXIT_OK if done.returncode == 0 else EXIT_PARTIAL
