"""`gpu-tui env NAME [--json] [--env ENV]`: the environment check, printed or as JSON."""

from __future__ import annotations

import argparse
import asyncio
import json

from gpu_tui.commands import EXIT_OK
from gpu_tui.commands.support.cells import cell_len, pad
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings
from gpu_tui.core.env.check import Check, build_checks, env_json
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable
from gpu_tui.services.envcheck import check_environment
from gpu_tui.services.hosts import build_ssh_host

__all__ = ["run_env", "format_checks"]


def format_checks(checks: list[Check]) -> list[str]:
    """`ok  name  detail` per check (NO, then the fix, when not ok), aligned in cells; the check
    names are technical words (nvidia-smi, torch, disk /) and stay as they are."""
    ok, no = _("ok"), _("NO")
    mark = max(cell_len(ok), cell_len(no)) + 1
    width = max(cell_len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{pad(ok if c.ok else no, mark)} {pad(c.name, width)}  {printable(c.detail)}")
        if c.fix:
            lines.append(" " * (mark + 1) + " " * width + "  " + _("fix: {fix}").format(fix=printable(c.fix)))
    return lines


def run_env(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    inst = settings.instance(args.name)

    async def go() -> dict[str, object] | list[str]:
        host = build_ssh_host(inst, settings, paths, SecretStore(), sighting=True)
        await host.connect()
        try:
            facts = await check_environment(host, inst, args.conda_env)
        finally:
            await host.close()
        checks = build_checks(facts)
        if args.json:
            return env_json(facts, checks)
        return format_checks(checks)

    out = asyncio.run(go())
    if isinstance(out, dict):
        print(json.dumps(out, ensure_ascii=False))
    else:
        print("\n".join(out))
    return EXIT_OK
