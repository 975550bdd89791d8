"""`gpu-tui conda NAME mirror tuna|ustc|bfsu|aliyun|default`: conda's channels and pip's index."""

from __future__ import annotations

import sys

from gpu_tui.commands import EXIT_OK
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_latency_ms
from gpu_tui.remote.host import Host
from gpu_tui.services.mirrors import PROBE_TIMEOUT, IndexAnswer, set_mirror

__all__ = ["run_mirror", "answer_line"]


def answer_line(a: IndexAnswer) -> str:
    """`URL answers in 120 ms (HTTP 200)`, or why it does not."""
    if a.answers:
        return _("{url} answers in {time} (HTTP {status})").format(
            url=a.url, time=format_latency_ms(a.ms), status=a.status)
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
            warning = _("warning: {name}: the mirror does not answer from the instance within {seconds:g} s "
                        "({what}); the configuration is written anyway").format(
                name=host.name, what=answer_line(a), seconds=PROBE_TIMEOUT)
            sys.stderr.write(f"gpu-tui: {printable(warning)}\n")
    if mirror != "default":
        print(_("conda keeps an index cache: run `conda clean -i` on the instance once, as the mirror's help says"))
    return EXIT_OK
