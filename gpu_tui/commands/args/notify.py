"""Arguments of `gpu-tui notify` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse
from typing import Any

from gpu_tui.core.i18n import _
from gpu_tui.core.notify.rules import DEFAULT_EVENTS, EVENTS

__all__ = ["add_notify_parser", "events_arg"]


def events_arg(text: str) -> tuple[str, ...]:
    """`job_end,balance` (commas or spaces) -> the event names; a usage error naming a bad one."""
    words = tuple(w for w in text.replace(",", " ").split() if w)
    for word in words:
        if word not in EVENTS:
            raise argparse.ArgumentTypeError(
                _("unknown event {word!r}; known: {known}").format(word=word, known=", ".join(EVENTS))
            )
    if not words:
        known = ", ".join(EVENTS)
        raise argparse.ArgumentTypeError(_("--events wants at least one event: {known}").format(known=known))
    return words


def add_notify_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "notify",
        help=_("where notifications go (phone, chat, e-mail) and which events"),
        description=_(
            "Targets are Apprise URLs (ntfy://, json://, lark://, dingtalk://, "
            "wecombot://, schan://, pushplus://, tgram://, mailto://, ...) or "
            "autodl-wechat. Targets added here are kept in the keyring."
        ),
    )
    verbs = p.add_subparsers(dest="notify_verb", metavar="VERB", required=True, parser_class=type(p))
    add = verbs.add_parser("add", help=_("add a target (kept in the keyring, never in the config)"))
    add.add_argument(
        "url",
        nargs="?",
        metavar="URL",
        help=_(
            "the target; '-' reads it from stdin, and leaving it out asks for it (hidden), "
            "which keeps it out of the shell history"
        ),
    )
    add.add_argument(
        "--events",
        type=events_arg,
        metavar="EVENTS",
        help=_("comma-separated events for this target (default: [notify] events, {default}); all: {known}").format(
            default=",".join(DEFAULT_EVENTS), known=",".join(EVENTS)
        ),
    )
    ls = verbs.add_parser("list", help=_("the targets, tokens masked"))
    ls.add_argument("--json", action="store_true", help=_("print JSON (CONTRACTS.md) instead of a table"))
    rm = verbs.add_parser("remove", help=_("forget a target added with `notify add`"))
    rm.add_argument("number", type=int, metavar="N", help=_("its number in `notify list`"))
    test = verbs.add_parser("test", help=_("send one test message to every target; exit 3 naming those that failed"))
    test.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help=_("only this target: its number in `notify list`, or its service (ntfy, json, ...)"),
    )
    test.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help=_("how long each target may take to answer (default 10)"),
    )
