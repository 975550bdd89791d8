"""Arguments of `gpu-tui provider login`, `instances`, `import` and `start` (kept apart so
building the parser stays cheap)."""

from __future__ import annotations

import argparse
from typing import TypeVar

from gpu_tui.core.i18n import _
from gpu_tui.core.providers import API_PROVIDERS

__all__ = ["add_provider_parsers"]

P = TypeVar("P", bound=argparse.ArgumentParser)


def add_provider_parsers(sub: argparse._SubParsersAction[P]) -> None:
    pv = sub.add_parser("provider", help=_("provider accounts: store an API token"))
    pv_sub = pv.add_subparsers(dest="provider_command", metavar="ACTION", required=True)
    login = pv_sub.add_parser("login", help=_("ask for the account's API token, test it, store it in the keyring"))
    login.add_argument("provider", choices=API_PROVIDERS, help=_("runpod, vast or autodl"))
    login.add_argument("--token-stdin", action="store_true", help=_("read the token from stdin instead of asking"))

    ls = sub.add_parser("instances", help=_("the instances of the provider accounts, with status, GPU and price"))
    ls.add_argument(
        "provider", nargs="?", choices=API_PROVIDERS, help=_("one provider (default: every one with a token)")
    )
    ls.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))

    imp = sub.add_parser(
        "import",
        help=_("write config entries for the account's instances"),
        description=_(
            "Adds (or updates, matched by provider and provider_id) one config entry per instance, "
            "stopped ones too. Host keys are not touched: an unknown key is asked about on first connect."
        ),
    )
    imp.add_argument("provider", choices=API_PROVIDERS, help=_("runpod, vast or autodl"))
    imp.add_argument("ids", nargs="*", metavar="ID", help=_("the provider's instance ids (default: choose)"))
    imp.add_argument("--all", action="store_true", help=_("every instance of the account"))
    imp.add_argument("--json", action="store_true", help=_("print JSON instead of lines"))

    st = sub.add_parser("start", help=_("power instances on through their provider's API and wait for SSH"))
    st.add_argument("names", nargs="+", metavar="NAME", help=_("instances to power on"))
    st.add_argument("--no-wait", action="store_true", help=_("return once the provider accepted the power-on"))
    st.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help=_("longest wait for SSH to answer (default 900)"),
    )
