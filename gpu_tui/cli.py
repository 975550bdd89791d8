"""The `gpu-tui` command line: parse arguments, build settings, run a subcommand or the dashboard.

Exit codes (docs/CONTRACTS.md): 0 done; 2 usage or configuration error; 3 done, but some instance
was unreachable or a step failed; 130 after Ctrl+C; `ssh NAME -- CMD` exits with the remote code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from gpu_tui import __version__
from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from gpu_tui.commands.args.add import add_add_parsers
from gpu_tui.commands.args.autostop import add_autostop_parser
from gpu_tui.commands.args.conda import add_conda_parser
from gpu_tui.commands.args.cost import add_cost_parser
from gpu_tui.commands.args.env import add_env_parser
from gpu_tui.commands.args.fit import add_fit_parser
from gpu_tui.commands.args.forward import add_forward_parser
from gpu_tui.commands.args.jobs import JOB_COMMANDS, add_job_parsers
from gpu_tui.commands.args.kill import add_kill_parser
from gpu_tui.commands.args.metrics import add_metrics_parser
from gpu_tui.commands.args.notify import add_notify_parser
from gpu_tui.commands.args.provider import add_provider_parsers
from gpu_tui.commands.args.shutdown import add_shutdown_parsers
from gpu_tui.commands.args.ssh import add_ssh_parser
from gpu_tui.commands.args.sshconfig import add_sshconfig_parsers
from gpu_tui.commands.args.sync import add_sync_parser, is_transport
from gpu_tui.commands.support.helpformat import CellHelpFormatter
from gpu_tui.commands.support.output import error_line
from gpu_tui.config.language import apply_language, resolve_language
from gpu_tui.config.logsetup import setup_logging
from gpu_tui.config.paths import Paths
from gpu_tui.config.settings import Settings, load_settings
from gpu_tui.core.errors import ConfigError, GpuTuiError, InputError
from gpu_tui.core.i18n import _, active_language

__all__ = ["main", "build_parser", "COMMANDS"]

COMMANDS: dict[str, tuple[str, str]] = {
    "status": ("status_cmd", "run_status"),
    "cost": ("cost_cmd", "run_cost"),
    "shutdown": ("shutdown_cmd", "run_shutdown"),
    "add": ("add_cmd", "run_add"),
    "remove": ("add_cmd", "run_remove"),
    "conda": ("conda_cmd", "run_conda"),
    "ssh": ("ssh_cmd", "run_ssh"),
    "sync": ("sync_cmd", "run_sync_command"),
    "env": ("env_cmd", "run_env"),
    "metrics": ("metrics_cmd", "run_metrics"),
    "kill": ("kill_cmd", "run_kill"),
    "autostop": ("autostop_cmd", "run_autostop"),
    "fit": ("fit_cmd", "run_fit"),
    "forward": ("forward_cmd", "run_forward"),
    "ssh-config": ("sshconfig_cmd", "run_ssh_config"),
    "code": ("sshconfig_cmd", "run_code"),
    "notify": ("notify_cmd", "run_notify"),
    "provider": ("provider_cmd", "run_provider"),
    "instances": ("provider_cmd", "run_instances"),
    "import": ("provider_cmd", "run_import"),
    "start": ("start_cmd", "run_start"),
    **{name: ("jobs_cmd", "run_job_command") for name in JOB_COMMANDS},
}
"""Subcommand -> (module in gpu_tui.commands, function(args, settings, paths) -> exit code);
the rest (none, `demo`, `local`) open the dashboard."""


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with one translated line; --help is laid out in terminal cells."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", CellHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(_("gpu-tui: error: {message}").format(message=message) + "\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gpu-tui", description=_("Watch and manage rented GPU machines over SSH."))
    p.add_argument("--config", type=Path, help=_("config file (default: $GPU_TUI_CONFIG or the user config dir)"))
    p.add_argument(
        "--lang",
        metavar="LANG",
        help=_("interface language: auto, en or zh-CN (default: $GPU_TUI_LANG, the config, the locale)"),
    )
    p.add_argument("--debug", action="store_true", help=_("verbose diagnostics log"))
    p.add_argument(
        "--version",
        action="version",
        version=f"gpu-tui {__version__}",
        help=_("show program's version number and exit"),
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    st = sub.add_parser("status", help=_("one sample from each instance, in parallel"))
    st.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    st.add_argument("names", nargs="*", metavar="NAME", help=_("instances to ask (default: all)"))

    add_add_parsers(sub)
    add_cost_parser(sub)
    add_shutdown_parsers(sub)
    add_job_parsers(sub)
    add_metrics_parser(sub)
    add_kill_parser(sub)
    add_env_parser(sub)
    add_conda_parser(sub)
    add_ssh_parser(sub)
    add_sync_parser(sub)
    add_autostop_parser(sub)
    add_fit_parser(sub)
    add_forward_parser(sub)
    add_sshconfig_parsers(sub)
    add_notify_parser(sub)
    add_provider_parsers(sub)

    demo = sub.add_parser("demo", help=_("the dashboard on a simulated fleet (no account needed)"))
    demo.add_argument("--instances", type=_instance_count, default=None, metavar="N", help=_("fleet size, 1-64"))
    sub.add_parser("local", help=_("the dashboard on this machine, without SSH"))
    return p


def _instance_count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        message = _("--instances wants a whole number, got {text!r}").format(text=text)
        raise argparse.ArgumentTypeError(message) from None
    if not 1 <= n <= 64:
        raise argparse.ArgumentTypeError(_("--instances must be 1..64, got {n}").format(n=n))
    return n


def _load(args: argparse.Namespace) -> tuple[Settings, Paths]:
    paths = Paths.default(args.config)
    # `add` and `import` may be what creates the file; `provider login` and `instances` need none
    explicit = (args.config is not None or "GPU_TUI_CONFIG" in os.environ) and args.command not in (
        "add",
        "import",
        "provider",
        "instances",
    )
    settings = load_settings(paths.config_file, must_exist=explicit)
    return settings, paths


def _dashboard(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    from gpu_tui.ui.factory import build_app, config_source, demo_source, local_source

    if args.command == "demo":
        source = demo_source(args.instances)
    elif args.command == "local":
        source = local_source(settings)
    else:
        source = config_source(settings, paths)
    while True:
        choice = build_app(source, settings, language=active_language()).run()
        if choice == "demo":
            source = demo_source()
        elif choice == "local":
            source = local_source(settings)
        elif choice == "config":  # the welcome screen added the first instance
            settings, paths = _load(args)
            source = config_source(settings, paths)
        else:
            return EXIT_OK


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse; everything after the first `--` is the command to run (CONTRACTS.md `-- CMD...`),
    kept out of argparse so that words like `--name` in it stay the command's."""
    words = list(sys.argv[1:] if argv is None else argv)
    tail: list[str] | None = None
    if "--" in words:
        i = words.index("--")
        words, tail = words[:i], words[i + 1 :]
    parser = build_parser()
    args = parser.parse_args(words)
    if tail is not None:
        if not hasattr(args, "cmd"):
            parser.error(_("`-- CMD...` is only for commands that run something (run)"))
        args.cmd = tail
    return args


def _language(words: list[str]) -> str:
    """The language, decided before the parser is built (its --help is translated): --lang and
    --config are read ahead of the rest; a config that fails to load is reported later, by the
    command, and meanwhile counts as `auto`."""
    ahead = argparse.ArgumentParser(add_help=False)
    ahead.add_argument("--config", type=Path)
    ahead.add_argument("--lang")
    known, _rest = ahead.parse_known_args(words[: words.index("--")] if "--" in words else words)
    configured = "auto"
    try:
        configured = load_settings(Paths.default(known.config).config_file).settings.language
    except GpuTuiError:
        pass  # the command loads it again and says what is wrong, in the language chosen here
    return resolve_language(known.lang, os.environ, configured)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if is_transport(words):  # rsync's remote shell (`sync`): not argparse, its words are rsync's
        from gpu_tui.commands.sync_cmd import run_transport

        return run_transport(words)
    try:
        apply_language(_language(words))
    except ConfigError as exc:
        sys.stderr.write(f"gpu-tui: {exc.message}\n")
        return EXIT_USAGE
    args = parse_args(words)
    try:
        settings, paths = _load(args)
        setup_logging(paths.log_file, debug=args.debug)
        runner = COMMANDS.get(args.command)
        if runner is not None:
            module, function = runner
            # imported on use: `gpu-tui status` need not load the dashboard, nor the other way round
            run: Callable[[argparse.Namespace, Settings, Paths], int] = getattr(
                importlib.import_module(f"gpu_tui.commands.{module}"), function
            )
            return run(args, settings, paths)
        return _dashboard(args, settings, paths)
    except ConfigError as exc:
        sys.stderr.write(f"gpu-tui: {exc.message}\n")
        return EXIT_USAGE
    except InputError as exc:
        sys.stderr.write(f"gpu-tui: {error_line(exc)}\n")
        return EXIT_USAGE
    except GpuTuiError as exc:
        sys.stderr.write(f"gpu-tui: {error_line(exc)}\n")
        return EXIT_PARTIAL
    except KeyboardInterrupt:
        return 130
    except EOFError:  # Ctrl+D at a prompt (a token, a URL, a choice): nothing was typed
        sys.stderr.write("\ngpu-tui: " + _("no answer given (input ended); nothing was changed") + "\n")
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader went away (`gpu-tui fit --list | head`): what it read was all it wanted;
        # point stdout at /dev/null so the interpreter's last flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
