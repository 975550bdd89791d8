"""`gpu-tui env NAME [--json] [--env ENV]`: the environment check, printed or as JSON."""

from __future__ import annotations

import argparse
import asyncio
import json

from gpu_tui.commands import EXIT_OK
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings
from gpu_tui.core.envcheck import build_checks, env_json
from gpu_tui.core.text import printable
from gpu_tui.services.envcheck import check_environment
from gpu_tui.services.hosts import build_ssh_host

__all__ = ["run_env"]


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
        width = max(len(c.name) for c in checks)
        lines = []
        for c in checks:
            lines.append(f"{'ok ' if c.ok else 'NO '} {c.name:<{width}}  {printable(c.detail)}")
            if c.fix:
                lines.append(f"{'':>4}{'':<{width}}  fix: {printable(c.fix)}")
        return lines

    out = asyncio.run(go())
    if isinstance(out, dict):
        print(json.dumps(out, ensure_ascii=False))
    else:
        print("\n".join(out))
    return EXIT_OK
