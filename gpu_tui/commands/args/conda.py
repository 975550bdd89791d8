"""Arguments of `gpu-tui conda` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

from gpu_tui.core.i18n import _

__all__ = ["add_conda_parser"]


def add_conda_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    conda = sub.add_parser("conda", help=_("conda environments on an instance (no conda init / activate needed)"))
    conda.add_argument("name", metavar="NAME", help=_("the instance"))
    verbs = conda.add_subparsers(dest="verb", metavar="VERB", required=True)
    ls = verbs.add_parser("list", help=_("envs with their python version"))
    ls.add_argument("--json", action="store_true", help=_("print JSON (CONTRACTS.md)"))
    create = verbs.add_parser("create", help=_("create an env (conda's output streams)"))
    create.add_argument("env", metavar="ENV", help=_("name of the new env"))
    create.add_argument("--python", required=True, metavar="X.Y", help=_("its python version, e.g. 3.11"))
    remove = verbs.add_parser("remove", help=_("remove an env"))
    remove.add_argument("env", metavar="ENV", help=_("the env to remove"))
    remove.add_argument("--yes", action="store_true", help=_("do not ask"))
    install = verbs.add_parser("install", help=_("install packages into an env (conda, or --pip)"))
    install.add_argument("env", metavar="ENV", help=_("the env to install into"))
    install.add_argument("packages", nargs="+", metavar="PKG", help=_("packages, e.g. numpy 'torch==2.3.*'"))
    install.add_argument("--pip", action="store_true", help=_("with the env's pip instead of conda"))
    verbs.add_parser("init", help=_("run `conda init bash` (then open a NEW shell)"))
    mirror = verbs.add_parser("mirror", help=_("point conda's channels and pip's index at a mirror, or back (default)"))
    mirror.add_argument(
        "mirror",
        choices=("tuna", "ustc", "bfsu", "aliyun", "default"),
        metavar="MIRROR",
        help=_("tuna, ustc, bfsu, aliyun, or default (what was there before)"),
    )
