"""What the simulated conda (sim/conda.py: run by tests/fakes/conda, and in-process by the demo,
demo/condarun.py) prints, in conda 24.x's forms, and the packages its channels have.

Stdlib only, nothing imported at run time (sim/conda.py is exec'd once per call).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~30 ms a start: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable

VERSION = "24.9.2"
PLATFORM = "linux-64"
BASE_PYTHON = "3.12.7"
CHANNEL_URLS = (
    "https://repo.anaconda.com/pkgs/main/linux-64",
    "https://repo.anaconda.com/pkgs/main/noarch",
    "https://repo.anaconda.com/pkgs/r/linux-64",
    "https://repo.anaconda.com/pkgs/r/noarch",
)
PYTHONS = {
    "2.7": "2.7.18",
    "3.6": "3.6.13",
    "3.7": "3.7.16",
    "3.8": "3.8.20",
    "3.9": "3.9.20",
    "3.10": "3.10.15",
    "3.11": "3.11.10",
    "3.12": "3.12.7",
    "3.13": "3.13.0",
}
"""The python a channel gives for `python=3.X`."""
INIT_FILES = (
    "condabin/conda",
    "bin/conda",
    "bin/conda-env",
    "bin/activate",
    "bin/deactivate",
    "etc/profile.d/conda.sh",
    "etc/fish/conf.d/conda.fish",
    "shell/condabin/Conda.psm1",
    "shell/condabin/conda-hook.ps1",
    "lib/python3.12/site-packages/xontrib/conda.xsh",
    "etc/profile.d/conda.csh",
)
"""What `conda init` reports on under the root prefix (it changes none of them)."""

METADATA = "Collecting package metadata (repodata.json): done\n"
SOLVED = "Solving environment: done\n"
EXTRACTING = "Downloading and Extracting Packages:\n"
PREPARED = "Preparing transaction: done\n"
VERIFIED = "Verifying transaction: done\n"
EXECUTED = "Executing transaction: done\n"
ALREADY_INSTALLED = "\n# All requested packages already installed.\n\n"
SIGNAL_TAILS = {s: f"\nCondaSignalInterrupt: Signal interrupt SIG{n}\n\n" for n, s in (("INT", 2), ("TERM", 15))}
"""What conda prints when a signal stops it, by signal number."""

BASE_TARGET = "The target prefix is the base prefix. Aborting."
REMOVE_ROOT = "cannot remove root environment, add -n NAME or -p PREFIX option"
NO_SPECS = "too few arguments, must supply command line package specs or --file"
NOT_AN_ENV_DIR = (
    "The target directory exists, but it is not a conda environment.\n"
    "Use 'conda create' to convert the directory to a conda environment.\n  target directory: "
)


def need_target(verb: str) -> str:
    return f'either -n NAME or -p PREFIX option required,\ntry "conda {verb} -h" for more details'


def not_an_env(prefix: str) -> str:
    return "Not a conda environment: " + prefix


def error(name: str, message: str) -> str:
    """An error as conda's exception handler prints it on stderr."""
    return f"\n{name}: {message}\n\n"


def channels(names: Iterable[str]) -> str:
    """conda's first lines: the channels, the platform."""
    return "Channels:\n" + "".join(f" - {c}\n" for c in names) + f"Platform: {PLATFORM}\n"


def not_found(missing: Iterable[str], channel_list: Iterable[str]) -> str:
    """PackagesNotFoundError's message: `missing` is on none of `channel_list`."""
    return (
        "The following packages are not available from current channels:\n\n"
        + "".join(f"  - {m}\n" for m in missing)
        + "\nCurrent channels:\n\n"
        + "".join(f"  - {c}\n" for c in channel_list)
        + "\nTo search for alternate channels that may provide the conda package you're\n"
        "looking for, navigate to\n\n    https://anaconda.org\n\nand use the search bar at the top of the page.\n"
    )


def plan(prefix: str, specs: Iterable[str], groups: Iterable[tuple[str, Iterable[str]]]) -> str:
    """conda's `## Package Plan ##`: the specs asked for and `groups`: (title, its rows) for
    NEW / UPDATED / REMOVED."""
    lines = ["", "## Package Plan ##", "", f"  environment location: {prefix}", ""]
    if specs:
        lines += ["  added / updated specs:"] + [f"    - {s}" for s in specs] + [""]
    for title, rows in groups:
        rows = list(rows)
        if rows:
            lines += ["", f"The following {title}:", ""] + rows + [""]
    return "\n".join(lines) + "\n\n"


def activate_hint(shown: str) -> str:
    """What a create ends with."""
    return (
        f"#\n# To activate this environment, use\n#\n#     $ conda activate {shown}\n#\n"
        "# To deactivate an active environment, use\n#\n#     $ conda deactivate\n\n"
    )


def init_report(root: str, rc_files: list[tuple[str, bool]]) -> list[str]:
    """`conda init`'s lines; `rc_files`: (path, whether it was changed)."""
    lines = [f"{'no change':<14}{root}/{rel}\n" for rel in INIT_FILES]
    lines += [f"{'modified' if changed else 'no change':<14}{path}\n" for path, changed in rc_files]
    if any(changed for _, changed in rc_files):
        return lines + ["\n==> For changes to take effect, close and re-open your current shell. <==\n\n"]
    return lines + ["No action taken.\n"]


def env_list(rows: Iterable[tuple[str, bool, str]]) -> str:
    """`conda env list`: rows of (name, active, prefix)."""
    body = "".join(f"{name:<20}  {'*' if active else ' '}  {prefix}\n" for name, active, prefix in rows)
    return "# conda environments:\n#\n" + body + "\n"


# the packages the simulated channels have, at one version each, and what each brings along
KNOWN = {
    "pip": "24.2",
    "setuptools": "75.1.0",
    "wheel": "0.44.0",
    "ca-certificates": "2024.9.24",
    "openssl": "3.0.15",
    "numpy": "1.26.4",
    "pandas": "2.2.2",
    "scipy": "1.13.1",
    "requests": "2.32.3",
    "pytorch": "2.3.0",
    "torchvision": "0.18.1",
    "transformers": "4.45.2",
    "cudatoolkit": "11.8.0",
    "pytorch-cuda": "12.1",
    "matplotlib": "3.9.2",
    "tqdm": "4.66.5",
    "jupyter": "1.0.0",
    "ipykernel": "6.29.5",
    "python-dateutil": "2.9.0post0",
    "pytz": "2024.1",
    "tzdata": "2024a",
    "six": "1.16.0",
}
PYTHON_DEPS = ("ca-certificates", "openssl", "pip", "setuptools", "wheel")
DEPS = {"python": PYTHON_DEPS, "pandas": ("numpy", "python-dateutil", "pytz", "tzdata"), "python-dateutil": ("six",)}
"""What a package brings with it (conda's solver, in small)."""
