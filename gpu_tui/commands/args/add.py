"""Arguments of `gpu-tui add` and `gpu-tui remove` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.money.cost import parse_hourly_rate

__all__ = ["add_add_parsers"]


def _rate(text: str) -> float:
    try:
        value = parse_hourly_rate(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"--rate: {exc.message}") from None
    if value is None:
        raise argparse.ArgumentTypeError(_("--rate wants a number (the hourly price)"))
    return value


def add_add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    add = sub.add_parser(
        "add",
        help=_(
            'add (or update) an instance from its login command, e.g. "ssh -p 23456 root@connect.westb.seetacloud.com"'
        ),
        description=_(
            "Paste the login command your provider shows. gpu-tui tests the login, asks before "
            "trusting a new host key, stores the password in the keyring (never in the config) and "
            "writes the instance to the config file, keeping your comments. Re-adding an instance "
            "whose port changed updates it."
        ),
    )
    add.add_argument("login", nargs="?", metavar="LOGIN", help=_("the login command (quote it), or user@host[:port]"))
    add.add_argument("--name", help=_("instance name (default: made from the provider, region and port)"))
    add.add_argument("--rate", type=_rate, metavar="R", help=_("hourly price in the config's currency"))
    add.add_argument(
        "--provider", choices=["autodl", "runpod", "vast", "generic"], help=_("default: guessed from the host")
    )
    add.add_argument(
        "--password-stdin",
        action="store_true",
        help=_(
            "read the password from stdin and ask nothing "
            "(no key install unless --install-key; an unknown host key needs --trust)"
        ),
    )
    add.add_argument(
        "--install-key",
        action="store_true",
        help=_("install gpu-tui's own key so later logins and sync need no password"),
    )
    add.add_argument(
        "--trust",
        metavar="SHA256:...",
        help=_("trust the host key with this fingerprint (from the provider's console)"),
    )
    add.add_argument(
        "--from-ssh-config", action="store_true", help=_("add hosts from ~/.ssh/config instead (name them, or choose)")
    )
    add.add_argument("hosts", nargs="*", metavar="HOST", help=argparse.SUPPRESS)

    rm = sub.add_parser("remove", help=_("remove an instance from the config and its password from the keyring"))
    rm.add_argument("name", metavar="NAME", help=_("the instance to remove"))
