"""Arguments of `gpu-tui env` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

__all__ = ["add_env_parser", "add_conda_parser"]


def add_env_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    env = sub.add_parser("env", help="environment check: driver, CUDA, python, conda, torch, disks, memory")
    env.add_argument("name", metavar="NAME")
    env.add_argument("--json", action="store_true", help="print JSON (CONTRACTS.md)")
    env.add_argument("--env", dest="conda_env", metavar="ENV",
                     help="check torch in this conda env (default: conda base, else python3)")


def add_conda_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    conda = sub.add_parser("conda", help="conda environments on an instance (no conda init / activate needed)")
    conda.add_argument("name", metavar="NAME")
    verbs = conda.add_subparsers(dest="verb", metavar="VERB", required=True)
    ls = verbs.add_parser("list", help="envs with their python version")
    ls.add_argument("--json", action="store_true", help="print JSON (CONTRACTS.md)")
    create = verbs.add_parser("create", help="create an env (conda's output streams)")
    create.add_argument("env", metavar="ENV")
    create.add_argument("--python", required=True, metavar="X.Y")
    remove = verbs.add_parser("remove", help="remove an env")
    remove.add_argument("env", metavar="ENV")
    remove.add_argument("--yes", action="store_true", help="do not ask")
    install = verbs.add_parser("install", help="install packages into an env (conda, or --pip)")
    install.add_argument("env", metavar="ENV")
    install.add_argument("packages", nargs="+", metavar="PKG")
    install.add_argument("--pip", action="store_true", help="with the env's pip instead of conda")
    verbs.add_parser("init", help="run `conda init bash` (then open a NEW shell)")
