"""`gpu-tui conda NAME list|create|remove|install|init|mirror`: conda envs without `conda activate`, and
conda's channels and pip's index set to a mirror (tuna|ustc|bfsu|aliyun|default)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TypedDict

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL
from gpu_tui.commands.support.cells import cell_len, pad
from gpu_tui.commands.support.output import confirm
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_bytes, format_latency_ms
from gpu_tui.remote.host import Host
from gpu_tui.services import conda as condasvc
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.killable import Killable
from gpu_tui.services.mirrors import PROBE_TIMEOUT, IndexAnswer, set_mirror

__all__ = ["run_conda", "run_mirror", "answer_line"]

EXIT_INTERRUPTED = 130
"""Ctrl+C, as a shell reports it (128 + SIGINT)."""


async def _stream(host: Host, command: str) -> int:
    """Print the command's output as it comes (conda's progress), return its exit status.

    Ctrl+C kills conda on the instance too: closing the channel alone would leave it running."""
    proc = Killable(host, command)
    try:
        async for line in proc.lines():
            print(printable(line), flush=True)
    except asyncio.CancelledError:
        stopped = await proc.cancel()
        how = _("cancelled; conda stopped") if stopped else _("cancelled; conda may still be running")
        sys.stderr.write(f"gpu-tui: {host.name}: {how}\n")
        return EXIT_INTERRUPTED
    return 1 if proc.exit_status is None else proc.exit_status  # None: it never said (the link dropped)


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise InputError(_("{question}: add --yes to do it without asking").format(question=question))
    return confirm(question)


class _EnvRow(TypedDict):
    """One env of `conda list`, as --json prints it."""

    name: str
    path: str
    python: str | None
    size_bytes: int | None


async def _run(args: argparse.Namespace, host: Host, state_dir: str) -> int:
    if args.verb == "mirror":  # pip's index too: needs no conda
        return await run_mirror(host, state_dir, args.mirror)
    install = await condasvc.conda_envs(host)
    if install is None:
        raise InputError(
            _(
                "{name}: no conda found on the instance "
                "(looked in $CONDA_EXE, PATH, ~/miniconda3, ~/anaconda3, ~/miniforge3, /opt/conda)"
            ).format(name=host.name)
        )
    if args.verb == "list":
        pythons, sizes = await asyncio.gather(condasvc.env_pythons(host, install), condasvc.env_sizes(host, install))
        envs: list[_EnvRow] = [
            {"name": n, "path": p, "python": pythons.get(n), "size_bytes": sizes.get(n)}
            for n, p in install.envs.items()
        ]
        if args.json:
            print(json.dumps({"envs": envs}, ensure_ascii=False))
        else:
            width = max(cell_len(printable(e["name"] or "")) for e in envs)
            for e in envs:
                size = e["size_bytes"]
                print(
                    f"{pad(printable(str(e['name'])), width)}  python {e['python'] or '-':<8}  "
                    f"{format_bytes(size if isinstance(size, int) else None):>9}  {printable(str(e['path']))}"
                )
        return EXIT_OK
    if args.verb == "create":
        command = condasvc.create_command(install, args.env, args.python)
    elif args.verb == "remove":
        command = condasvc.remove_command(install, args.env)
        question = _("remove conda env {env} on {name}").format(env=args.env, name=host.name)
        if not args.yes and not _confirm(question):
            return EXIT_OK
    elif args.verb == "install":
        command = condasvc.install_command(install, args.env, list(args.packages), pip=args.pip)
    else:
        command = condasvc.init_command(install)
    status = await _stream(host, command)
    if status == EXIT_INTERRUPTED:
        return status
    if status != 0:
        failed = _("conda {verb} failed (exit {status})").format(verb=args.verb, status=status)
        sys.stderr.write(f"gpu-tui: {host.name}: {failed}\n")
        return EXIT_PARTIAL
    if args.verb == "init":
        print(_("done: open a NEW shell on the instance for `conda activate` to work there"))
    return EXIT_OK


def run_conda(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    inst = settings.instance(args.name)

    async def go() -> int:
        host = build_ssh_host(inst, settings, paths, SecretStore(), sighting=True)
        await host.connect()
        try:
            return await _run(args, host, inst.state_dir)
        finally:
            await host.close()

    return asyncio.run(go())


def answer_line(a: IndexAnswer) -> str:
    """`URL answers in 120 ms (HTTP 200)`, or why it does not."""
    if a.answers:
        return _("{url} answers in {time} (HTTP {status})").format(
            url=a.url, time=format_latency_ms(a.ms), status=a.status
        )
    if a.status is not None:
        return _("{url} answers HTTP {status}").format(url=a.url, status=a.status)
    return _("{url} does not answer: {error}").format(url=a.url, error=a.error or _("no answer"))


async def run_mirror(host: Host, state_dir: str, mirror: str) -> int:
    result = await set_mirror(host, state_dir, mirror)
    for line in result.written:
        print(printable(f"{host.name}: {line}"))
    for a in result.answers:
        if a.answers:
            print(printable(f"{host.name}: {answer_line(a)}"))
        else:
            warning = _(
                "warning: {name}: the mirror does not answer from the instance within {seconds:g} s "
                "({what}); the configuration is written anyway"
            ).format(name=host.name, what=answer_line(a), seconds=PROBE_TIMEOUT)
            sys.stderr.write(f"gpu-tui: {printable(warning)}\n")
    if mirror != "default":
        print(_("conda keeps an index cache: run `conda clean -i` on the instance once, as the mirror's help says"))
    return EXIT_OK
