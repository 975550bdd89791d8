"""`gpu-tui kill NAME PID [--yes]`: end a process of the instance that holds GPU memory.

Exit 0 once it is gone; 2 when the pid is not one this instance may end (a host pid, a process
that holds no GPU) or the question went unanswered; 3 when the instance cannot be reached or the
process outlived SIGKILL.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from gpu_tui.commands import EXIT_OK
from gpu_tui.commands.support.output import confirm
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.monitor.freegpu import free_gpu, pick_target, read_holders

__all__ = ["run_kill"]


def run_kill(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    inst = settings.instance(args.name)

    async def body() -> int:
        host = build_ssh_host(inst, settings, paths, SecretStore(), sighting=True)
        await host.connect()
        try:
            att, scan = await read_holders(host, inst)
            target = pick_target(inst.name, att, scan, args.pid)
            if not args.yes:
                question = target.question(inst.name)
                if not sys.stdin.isatty():
                    raise InputError(_("{question}: add --yes to do it without asking").format(question=question))
                if not confirm(question):
                    print(_("nothing was done"))
                    return EXIT_OK
            how = await free_gpu(host, inst, target)
        finally:
            await host.close()
        print(_("{name}: pid {pid}: {how}").format(name=inst.name, pid=target.pid, how=_ended_words(how)))
        return EXIT_OK

    return asyncio.run(body())


def _ended_words(how: str) -> str:
    """How it ended (`gone INT`, `gone`, a job's `stopped TERM`...), for a person."""
    word, _sep, signal = how.partition(" ")
    if word == "gone" and signal:
        return _("ended on SIG{signal}").format(signal=signal)
    if word == "gone":
        return _("had already ended")
    if word == "stopped" and signal:
        return _("its job stopped on SIG{signal}").format(signal=signal)
    if how == "finished":
        return _("its job had already finished")
    return how
