"""Arguments of `gpu-tui shutdown` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

from gpu_tui.core.i18n import _

__all__ = ["add_shutdown_parsers"]


def add_shutdown_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sd = sub.add_parser(
        "shutdown",
        help=_("shut instances down (in parallel) and verify each one stopped"),
        description=_(
            "Runs the provider's shutdown on each instance, then verifies it: the far end must "
            "close the connection and a fresh login must fail. Exit 3, with the names on stderr, for "
            "any instance that could not be shut down, including one that cannot be reached (nothing "
            "could be verified)."
        ),
    )
    sd.add_argument("names", nargs="*", metavar="NAME", help=_("instances to shut down"))
    sd.add_argument("--all", action="store_true", help=_("every configured instance"))
    sd.add_argument("--yes", action="store_true", help=_("do not ask"))
    sd.add_argument(
        "--via-api",
        action="store_true",
        help=_(
            "power imported provider instances off through the provider's API (verified by its status); "
            "without it the API is used only when SSH cannot reach them"
        ),
    )
    sd.add_argument(
        "--no-sync",
        action="store_true",
        help=_(
            "do not pull the results first (by default an instance with sync.local set is pulled before its shutdown)"
        ),
    )
