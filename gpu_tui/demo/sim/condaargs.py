"""The sim conda's argument parser (sim/conda.py, sim/condacmds.py): a small argparse."""

from __future__ import annotations

from .condastate import Usage, out

TYPE_CHECKING = False  # typing costs a fake ~30 ms a start: annotations only
if TYPE_CHECKING:
    from .condastate import Opts

COMMON_FLAGS = {
    "--json": "json",
    "-y": "yes",
    "--yes": "yes",
    "-q": "quiet",
    "--quiet": "quiet",
    "-v": "verbose",
    "--verbose": "verbose",
    "-d": "dry_run",
    "--dry-run": "dry_run",
    "--offline": "offline",
    "--debug": "verbose",
    "--override-channels": "override_channels",
    "--no-default-packages": "no_default_packages",
    "--use-local": "use_local",
}
PREFIX_OPTS = {"-n": "name", "--name": "name", "-p": "prefix", "--prefix": "prefix"}
CHANNEL_OPTS = {"-c": "channel", "--channel": "channel"}


def parse(
    argv: list[str],
    usage: str,
    values: dict[str, str] | None = None,
    flags: dict[str, str] | None = None,
    remainder: bool = False,
) -> tuple[Opts, list[str]]:
    """A small argparse: returns (opts, positionals). ``remainder``: everything from the first
    positional on is positional (``conda run``'s REMAINDER)."""
    values = dict(PREFIX_OPTS, **CHANNEL_OPTS, **(values or {}))
    flags = dict(COMMON_FLAGS, **(flags or {}))
    opts: Opts = {"channel": []}
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            pos.extend(argv[i:])
            break
        if a in ("-h", "--help"):
            out(usage)
            raise SystemExit(0)
        if a.startswith("-") and a != "-":
            key, eq, val = a.partition("=")
            if key in values:
                if not eq:
                    if i >= len(argv):
                        raise Usage(f"argument {key}: expected one argument", usage)
                    val = argv[i]
                    i += 1
                dest = values[key]
                if dest == "channel":
                    opts["channel"].append(val)
                else:
                    if dest in ("name", "prefix") and opts.get("name" if dest == "prefix" else "prefix") is not None:
                        raise Usage("argument -p/--prefix: not allowed with argument -n/--name", usage)
                    opts[dest] = val
                continue
            if a in flags:
                opts[flags[a]] = True
                continue
            raise Usage(f"unrecognized arguments: {a}", usage)
        pos.append(a)
        if remainder:
            pos.extend(argv[i:])
            break
    return opts, pos
