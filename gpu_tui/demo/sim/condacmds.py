"""The sshd tier's conda (sim/conda.py): the commands that read and change envs: info, env
list / remove, list, create, install, remove.
"""

from __future__ import annotations

import os

from . import condastate as st
from . import condatext as ct
from .condaargs import parse
from .condastate import (
    DEFAULT_CHANNELS,
    KNOWN,
    NAME_FORBIDDEN,
    SOLVER_UA,
    CondaError,
    CondaValueError,
    Usage,
    active_prefix,
    all_prefixes,
    channel_of,
    conda_version,
    confirm,
    deps_of,
    dist_line,
    dump_json,
    env_name,
    environments_txt,
    envs_dirs,
    history_entry,
    home,
    is_env,
    link_python,
    locate,
    make_prefix,
    out,
    parse_spec,
    print_envs,
    print_plan,
    read_packages,
    require_env,
    resolve_version,
    run_transaction,
    same,
    unavailable,
)
from .condatext import BASE_PYTHON, PLATFORM, PYTHONS

TYPE_CHECKING = False  # typing costs a fake ~30 ms a start: annotations only
if TYPE_CHECKING:
    from typing import Any

    from .condastate import Opts

# -------------------------------------------------------------------------------- commands


def info_dict(with_envs: bool = True) -> dict[str, Any]:
    uid, gid = os.getuid(), os.getgid()
    ver = conda_version()
    ap = active_prefix()
    d = {
        "GID": gid,
        "UID": uid,
        "active_prefix": ap,
        "active_prefix_name": (env_name(ap) or ap) if ap else None,
        "av_data_dir": os.path.join(st.root(), "etc", "conda"),
        "av_metadata_url_base": None,
        "channels": list(DEFAULT_CHANNELS),
        "conda_build_version": "not installed",
        "conda_env_version": ver,
        "conda_location": os.path.join(st.root(), "lib", "python3.12", "site-packages", "conda"),
        "conda_prefix": st.root(),
        "conda_shlvl": int(os.environ.get("CONDA_SHLVL", "-1") or -1),
        "conda_version": ver,
        "config_files": [],
        "default_prefix": ap or st.root(),
        "env_vars": {},
        "envs_dirs": envs_dirs(),
        "netrc_file": None,
        "offline": False,
        "pkgs_dirs": [os.path.join(st.root(), "pkgs"), os.path.join(home(), ".conda", "pkgs")],
        "platform": PLATFORM,
        "python_version": BASE_PYTHON + ".final.0",
        "rc_path": os.path.join(home(), ".condarc"),
        "requests_version": "2.32.3",
        "root_prefix": st.root(),
        "root_writable": os.access(st.root(), os.W_OK),
        "site_dirs": [],
        "solver": {"default": True, "name": "libmamba", "user_agent": SOLVER_UA},
        "sys.executable": os.path.join(st.root(), "bin", "python"),
        "sys.prefix": st.root(),
        "sys.version": BASE_PYTHON + " | packaged by Anaconda, Inc. | (main, Oct  4 2024, 13:27:36) [GCC 11.2.0]",
        "user_agent": f"conda/{ver} requests/2.32.3 CPython/{BASE_PYTHON} Linux/{os.uname().release} "
        f"glibc/2.36 {SOLVER_UA}",
        "user_rc_path": os.path.join(home(), ".condarc"),
        "virtual_pkgs": [
            ["__archspec", "1", os.uname().machine],
            ["__conda", ver, "0"],
            ["__cuda", "12.8", "0"],
            ["__glibc", "2.36", "0"],
            ["__linux", os.uname().release.split("-")[0], "0"],
            ["__unix", "0", "0"],
        ],
    }
    if with_envs:
        d["envs"] = all_prefixes()
    return d


def cmd_info(argv: list[str]) -> int:
    usage = "usage: conda info [-h] [--json] [-v] [-q] [-a] [--base] [-e] [-s] [--unsafe-channels]"
    opts, pos = parse(
        argv,
        usage,
        flags={
            "--base": "base",
            "-e": "envs",
            "--envs": "envs",
            "-a": "all",
            "--all": "all",
            "-s": "system",
            "--system": "system",
        },
    )
    if pos:
        raise Usage(f"unrecognized arguments: {' '.join(pos)}", usage)
    if opts.get("json"):
        if opts.get("base"):
            dump_json({"root_prefix": st.root()})
        else:
            dump_json(info_dict())
        return 0
    if opts.get("base"):
        out(st.root())
        return 0
    if opts.get("envs") and not opts.get("all"):
        print_envs(all_prefixes())
        return 0
    d = info_dict(with_envs=False)
    ap = d["active_prefix"]
    rows = [
        ("active environment", d["active_prefix_name"] or "None"),
    ]
    if ap:
        rows.append(("active env location", ap))
    rows += [
        ("shell level", str(max(d["conda_shlvl"], 0))),
        ("user config file", d["user_rc_path"]),
        ("populated config files", ""),
        ("conda version", d["conda_version"]),
        ("conda-build version", d["conda_build_version"]),
        ("python version", d["python_version"]),
        ("solver", "libmamba (default)"),
        ("virtual packages", ["=".join(v) for v in d["virtual_pkgs"]]),
        ("base environment", f"{st.root()}  ({'writable' if d['root_writable'] else 'read only'})"),
        ("conda av data dir", d["av_data_dir"]),
        ("conda av metadata url", "None"),
        ("channel URLs", d["channels"]),
        ("package cache", d["pkgs_dirs"]),
        ("envs directories", d["envs_dirs"]),
        ("platform", PLATFORM),
        ("user-agent", d["user_agent"]),
        ("UID:GID", f"{d['UID']}:{d['GID']}"),
        ("netrc file", "None"),
        ("offline mode", "False"),
    ]
    out()
    for key, value in rows:
        values = value if isinstance(value, list) else [value]
        out(f"{key:>23} : {values[0]}")
        for v in values[1:]:
            out(f"{'':>23}   {v}")
    out()
    if opts.get("envs"):
        print_envs(all_prefixes())
    return 0


def cmd_env(argv: list[str]) -> int:
    usage = "usage: conda env [-h] command ..."
    if not argv or argv[0] in ("-h", "--help"):
        out(usage)
        return 0
    sub, rest = argv[0], argv[1:]
    if sub == "list":
        u = "usage: conda env list [-h] [--json] [-v] [-q]"
        opts, pos = parse(rest, u)
        if pos:
            raise Usage(f"unrecognized arguments: {' '.join(pos)}", u)
        prefixes = all_prefixes()
        if opts.get("json"):
            dump_json({"envs": prefixes})
        else:
            print_envs(prefixes)
        return 0
    if sub == "remove":
        u = "usage: conda env remove [-h] [-n ENVIRONMENT | -p PATH] [-d] [--json] [-v] [-q] [-y]"
        opts, pos = parse(rest, u)
        if pos:
            raise Usage(f"unrecognized arguments: {' '.join(pos)}", u)
        return remove_env(opts)
    if sub in ("create", "export", "update", "config"):
        raise Usage(f"the fake conda (tests/fakes/conda) does not implement `conda env {sub}`", usage)
    raise Usage(
        f"argument command: invalid choice: '{sub}' (choose from 'config', 'create', 'export', "
        "'list', 'remove', 'update')",
        usage,
    )


def remove_env(opts: Opts) -> int:
    if opts.get("name") is None and opts.get("prefix") is None:
        raise CondaValueError(ct.need_target("remove"))
    prefix = locate(opts.get("name"), opts.get("prefix"))
    if same(prefix, st.root()):
        raise CondaError(ct.REMOVE_ROOT, "CondaEnvironmentError")
    if same(prefix, active_prefix() or st.root()):
        raise CondaError(
            "Cannot remove current environment. Deactivate and run conda remove again", "CondaEnvironmentError"
        )
    require_env(prefix)
    pkgs = read_packages(prefix)
    if not opts.get("json"):
        st.err(f"\nRemove all packages in environment {prefix}:\n\n")
        print_plan(prefix, [], removed=[dist_line(v[2], n, v[0]) for n, v in sorted(pkgs.items())], solve=False)
    confirm(
        f"Everything found within the environment ({prefix}), including any conda environment "
        "configurations and any non-conda files, will be deleted. Do you wish to continue?\n",
        default="no",
        assume_yes=opts.get("yes"),
        dry_run=opts.get("dry_run"),
    )
    if not opts.get("json"):
        run_transaction()
    else:
        st.io().pause()
    import shutil

    shutil.rmtree(prefix, ignore_errors=True)
    unregister(prefix)
    if opts.get("json"):
        dump_json({"actions": {"PREFIX": prefix, "UNLINK": sorted(pkgs)}, "success": True})
    return 0


def register(prefix: str) -> None:
    path = environments_txt()
    try:
        with open(path, encoding="utf-8") as f:
            known = f.read().splitlines()
    except OSError:
        known = []
    if prefix not in known:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(prefix + "\n")


def unregister(prefix: str) -> None:
    path = environments_txt()
    try:
        with open(path, encoding="utf-8") as f:
            known = f.read().splitlines()
    except OSError:
        return
    keep = [p for p in known if p and not same(p, prefix)]
    if len(keep) != len(known):
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(p + "\n" for p in keep))


def cmd_list(argv: list[str]) -> int:
    usage = "usage: conda list [-h] [-n ENVIRONMENT | -p PATH] [--json] [-v] [-q] [regex]"
    opts, pos = parse(argv, usage, flags={"--export": "export", "-e": "export", "--explicit": "explicit"})
    if len(pos) > 1:
        raise Usage(f"unrecognized arguments: {' '.join(pos[1:])}", usage)
    prefix = locate(opts.get("name"), opts.get("prefix"), must_exist=True)
    pkgs = read_packages(prefix)
    names = sorted(n for n in pkgs if not pos or pos[0] in n)
    if opts.get("json"):
        rows = []
        for n in names:
            version, build, channel = pkgs[n]
            main = channel in ("defaults", "pkgs/main")
            rows.append(
                {
                    "base_url": "https://repo.anaconda.com/pkgs/main"
                    if main
                    else f"https://conda.anaconda.org/{channel}",
                    "build_number": 0,
                    "build_string": build,
                    "channel": "pkgs/main" if main else channel,
                    "dist_name": f"{n}-{version}-{build}",
                    "name": n,
                    "platform": PLATFORM,
                    "version": version,
                }
            )
        dump_json(rows)
        return 0
    out(f"# packages in environment at {prefix}:")
    out("#")
    out("# Name                    Version                   Build  Channel")
    for n in names:
        version, build, channel = pkgs[n]
        ch = "" if channel in ("defaults", "pkgs/main") else channel
        out(f"{n:<25} {version:<15} {build:>15}  {ch}")
    return 0


def check_available(specs: list[str], opts: Opts) -> list[tuple[str | None, str, str]]:
    """The specs parsed; PackagesNotFoundError (after the solve's lines) if a channel lacks one."""
    parsed = [parse_spec(s) for s in specs]

    def missing(name: str, constraint: str) -> bool:
        pinned = constraint[:1] == "=" and name == "python"
        return unavailable(name) or pinned and ".".join(constraint.lstrip("=").split(".")[:2]) not in PYTHONS

    lacking = [s.strip() for s, (_, n, c) in zip(specs, parsed, strict=True) if missing(n, c)]
    if lacking:
        if not opts.get("json"):
            st.write(ct.channels(opts["channel"] or ["defaults"]) + ct.METADATA + "Solving environment: failed\n")
        raise CondaError(ct.not_found(lacking, opts["channel"] or DEFAULT_CHANNELS), "PackagesNotFoundError")
    return parsed


def cmd_create(argv: list[str]) -> int:
    usage = (
        "usage: conda create [-h] [--clone ENV] (-n ENVIRONMENT | -p PATH) [-c CHANNEL] [-y] [-d] "
        "[--json] [-q] [package_spec ...]"
    )
    opts, specs = parse(argv, usage)
    if opts.get("name") is None and opts.get("prefix") is None:
        raise CondaValueError(ct.need_target("create"))
    name = opts.get("name")
    if name is not None and name not in ("base", "root"):
        bad = [c for c in NAME_FORBIDDEN if c in name]
        if bad or not name.strip():
            raise CondaValueError(f"Invalid environment name: {name!r}\n  Characters not allowed: {NAME_FORBIDDEN}")
    prefix = locate(name, opts.get("prefix"))
    if same(prefix, st.root()):
        raise CondaValueError(ct.BASE_TARGET)
    parsed = check_available(specs, opts)
    quiet_json = opts.get("json")
    if is_env(prefix):
        if not quiet_json:
            out(f"WARNING: A conda environment already exists at '{prefix}'")
            out()
        confirm(
            "Remove existing environment?\nThis will remove ALL directories contained within this "
            "specified prefix directory.\n",
            default="no",
            assume_yes=opts.get("yes"),
        )
        import shutil

        shutil.rmtree(prefix)
    elif os.path.isdir(prefix) and os.listdir(prefix):
        if not quiet_json:
            out(f"WARNING: A directory already exists at the target location '{prefix}'")
            out("but it is not a conda environment.")
        confirm("Continue creating environment", default="no", assume_yes=opts.get("yes"))
    channel = channel_of(opts["channel"], None)
    # What make_prefix will write, shown first (so a delayed create is visible mid-way).
    want = {}
    for ch, n, c in parsed:
        want[n] = dist_line(channel_of(opts["channel"], ch), n, resolve_version(n, c))
    for dep in deps_of(list(want)):
        want.setdefault(dep, dist_line("defaults", dep, KNOWN[dep]))
    if not quiet_json:
        print_plan(prefix, specs, new=[want[n] for n in sorted(want)], cli_channels=opts["channel"])
    confirm("Proceed", assume_yes=opts.get("yes") or quiet_json, dry_run=opts.get("dry_run"))
    if quiet_json:
        st.io().pause()
    else:
        run_transaction()
    added = make_prefix(prefix, specs, argv=["create"] + list(argv), channel=channel)
    register(prefix)
    if quiet_json:
        dump_json({"actions": {"LINK": added, "PREFIX": prefix}, "prefix": prefix, "success": True})
        return 0
    st.write(ct.activate_hint(name or prefix))
    return 0


def cmd_install(argv: list[str], verb: str = "install") -> int:
    usage = (
        f"usage: conda {verb} [-h] [-n ENVIRONMENT | -p PATH] [-c CHANNEL] [-y] [-d] [--json] [-q] [package_spec ...]"
    )
    opts, specs = parse(argv, usage, flags={"--force-reinstall": "force"})
    prefix = locate(opts.get("name"), opts.get("prefix"), must_exist=True)
    if not specs:
        raise CondaValueError(ct.NO_SPECS)
    parsed = check_available(specs, opts)
    have = read_packages(prefix)
    new, updated, removed = [], [], []
    for ch, n, c in parsed:
        version = resolve_version(n, c)
        line = dist_line(channel_of(opts["channel"], ch), n, version)
        if n in have:
            if have[n][0] == version and not opts.get("force"):
                continue
            removed.append(dist_line(have[n][2], n, have[n][0]))
            updated.append(line)
        else:
            new.append(line)
    for dep in deps_of([p[1] for p in parsed if p[1] not in have]):
        if dep not in have:
            new.append(dist_line("defaults", dep, KNOWN[dep]))
    json_mode = opts.get("json")
    if not new and not updated:
        if json_mode:
            dump_json({"message": "All requested packages already installed.", "success": True})
        else:
            st.write(ct.channels(opts["channel"] or ["defaults"]) + ct.METADATA + ct.SOLVED + ct.ALREADY_INSTALLED)
        return 0
    if not json_mode:
        print_plan(prefix, specs, new=new, updated=updated, cli_channels=opts["channel"])
    confirm("Proceed", assume_yes=opts.get("yes") or json_mode, dry_run=opts.get("dry_run"))
    if json_mode:
        st.io().pause()
    else:
        run_transaction()
    with open(os.path.join(prefix, "conda-meta", "history"), "a", encoding="utf-8") as f:
        f.write(history_entry([verb] + list(argv), removed=removed, added=sorted(new + updated), specs=specs))
    if any(p[1] == "python" for p in parsed):
        link_python(prefix)
    if json_mode:
        dump_json({"actions": {"LINK": sorted(new + updated), "PREFIX": prefix, "UNLINK": removed}, "success": True})
    return 0


def cmd_remove(argv: list[str], verb: str = "remove") -> int:
    usage = f"usage: conda {verb} [-h] [-n ENVIRONMENT | -p PATH] [--all] [-y] [-d] [--json] [-q] [package_name ...]"
    opts, names = parse(argv, usage, flags={"--all": "all", "--force": "force"})
    if opts.get("all"):
        if opts.get("name") is None and opts.get("prefix") is None:
            opts["prefix"] = active_prefix() or st.root()
        return remove_env(opts)
    if not names:
        raise CondaValueError(f'no package names supplied,\n       try "conda {verb} -h" for more details')
    prefix = locate(opts.get("name"), opts.get("prefix"), must_exist=True)
    have = read_packages(prefix)
    missing = [n for n in names if n.lower() not in have]
    if missing:
        raise CondaError(
            "The following packages are missing from the target environment:\n"
            + "".join(f"  - {m}\n" for m in missing),
            "PackagesNotFoundError",
        )
    if same(prefix, st.root()) and any(n.lower() in ("python", "conda") for n in names):
        raise CondaError("cannot remove python, conda from root environment", "CondaEnvironmentError")
    removed = [dist_line(have[n.lower()][2], n.lower(), have[n.lower()][0]) for n in names]
    if not opts.get("json"):
        print_plan(prefix, names, removed=removed)
    confirm("Proceed", assume_yes=opts.get("yes") or opts.get("json"), dry_run=opts.get("dry_run"))
    if not opts.get("json"):
        run_transaction()
    with open(os.path.join(prefix, "conda-meta", "history"), "a", encoding="utf-8") as f:
        f.write(history_entry([verb] + list(argv), removed=removed, specs_kind="remove", specs=names))
    if opts.get("json"):
        dump_json({"actions": {"PREFIX": prefix, "UNLINK": removed}, "success": True})
    return 0
