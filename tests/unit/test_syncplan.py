"""Sync path rules, rsync-style excludes and rsync output parsing (gpu_tui.core.syncplan)."""

from __future__ import annotations

import pytest

from gpu_tui.commands.args.sync import is_transport
from gpu_tui.core.syncplan import (
    Excludes,
    SyncProgress,
    SyncSummary,
    is_partial,
    needs_transfer,
    parse_progress,
    parse_rsync_version,
    parse_stats,
    partial_name,
    resolve_local,
    resolve_remote,
    summary_json,
    summary_line,
)
from gpu_tui.services.sync.transport import Transport, remote_command

HOME = "/root"


@pytest.mark.parametrize(
    ("arg", "configured", "workdir", "want"),
    [
        (None, None, None, "/root"),  # nothing: the remote home
        (None, None, "/root/autodl-tmp", "/root/autodl-tmp"),  # workdir
        (None, "proj", "/root/autodl-tmp", "/root/proj"),  # sync.remote wins, relative to home
        ("/data/x", "proj", "/w", "/data/x"),  # the argument wins
        ("out/", None, None, "/root/out"),
        ("~", None, None, "/root"),
        ("~/a/../b", None, None, "/root/b"),
        ("./", None, None, "/root"),
        ("/", None, None, "/"),
    ],
)
def test_remote_path_rules(arg, configured, workdir, want) -> None:
    assert resolve_remote(arg, configured, workdir, home=HOME) == want


@pytest.mark.parametrize(
    ("arg", "configured", "want"),
    [
        (None, None, "/home/me/cwd"),  # the current directory
        (None, "~/code/proj", "/home/me/code/proj"),  # sync.local, ~ expanded
        ("sub", "~/code/proj", "/home/me/cwd/sub"),  # the argument, relative to cwd
        ("/abs/", None, "/abs"),
        ("~", None, "/home/me"),
    ],
)
def test_local_path_rules(arg, configured, want) -> None:
    assert resolve_local(arg, configured, cwd="/home/me/cwd", home="/home/me") == want


def test_local_path_rules_on_windows() -> None:
    got = resolve_local("data", None, cwd="C:\\Users\\me\\proj", home="C:\\Users\\me", windows=True)
    assert got == "C:\\Users\\me\\proj\\data"
    assert resolve_local("~/x", None, cwd="C:\\a", home="C:\\Users\\me", windows=True) == "C:\\Users\\me\\x"


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "excluded"),
    [
        ("*.ckpt", "model.ckpt", False, True),
        ("*.ckpt", "runs/a/b/model.ckpt", False, True),  # no `/`: any depth
        ("*.ckpt", "model.ckpt.txt", False, False),
        (".git", ".git", True, True),
        (".git", "sub/.git", True, True),
        ("__pycache__", "pkg/__pycache__", True, True),
        ("data/", "data", True, True),  # trailing `/`: directories only
        ("data/", "data", False, False),
        ("/out", "out", True, True),  # leading `/`: the transfer root only
        ("/out", "src/out", True, False),
        ("logs/*.log", "logs/a.log", False, True),  # inner `/`: the end of the path
        ("logs/*.log", "x/logs/a.log", False, True),
        ("logs/*.log", "logs/sub/a.log", False, False),  # `*` stops at `/`
        ("logs/**.log", "logs/sub/a.log", False, True),  # `**` does not
        ("wandb/***", "wandb", True, True),
        ("wandb/***", "wandb/run-1/files/x", False, True),
        ("ckpt-?", "ckpt-1", False, True),
        ("ckpt-?", "ckpt-10", False, False),
        ("[ab].txt", "a.txt", False, True),
        ("[!ab].txt", "a.txt", False, False),
        ("[!ab].txt", "c.txt", False, True),
        ("a+b(1).txt", "a+b(1).txt", False, True),  # regex characters are literal
    ],
)
def test_excludes_match_like_rsync(pattern, path, is_dir, excluded) -> None:
    assert Excludes([pattern]).excluded(path, is_dir) is excluded


def test_no_excludes() -> None:
    ex = Excludes(["", "  "])
    assert not ex and not ex.excluded("anything", False)


def test_sftp_partials_and_quick_check() -> None:
    assert partial_name("model.pt") == ".model.pt.gpu-tui-partial"
    assert is_partial(partial_name("x")) and not is_partial("x.gpu-tui-partial")
    assert needs_transfer(10, 100.9, None, None)
    assert not needs_transfer(10, 100.9, 10, 100)  # same size, same second
    assert needs_transfer(10, 100, 11, 100)
    assert needs_transfer(10, 101, 10, 100)


def test_rsync_output_parsing() -> None:
    assert parse_rsync_version("rsync  version 3.2.7  protocol version 31") == (3, 2, 7)
    assert parse_rsync_version("rsync  version v3.4.1  protocol version 32") == (3, 4, 1)
    assert parse_rsync_version("openrsync: protocol version 29") is None
    assert parse_rsync_version("") is None
    assert parse_progress("      5,000,000  99%  676.73MB/s    0:00:00 (xfr#1, to-chk=2/4)") == (5_000_000, 99)
    assert parse_progress("         32.768   0%    0,00kB/s    0:00:00  ") == (32768, 0)  # a German locale
    assert parse_progress("sub/b.txt") is None
    stats = parse_stats(
        """
Number of files: 4 (reg: 2, dir: 2)
Number of regular files transferred: 2
Total file size: 5,000,003 bytes
Total transferred file size: 5,000,003 bytes
Literal data: 5,000,003 bytes
Matched data: 0 bytes
Total bytes sent: 5,001,393
Total bytes received: 53
sent 5,001,393 bytes  received 53 bytes  10,002,892.00 bytes/sec""".splitlines()
    )
    assert stats is not None
    assert (stats.files, stats.bytes_sent, stats.bytes_received, stats.literal) == (2, 5_001_393, 53, 5_000_003)
    assert parse_stats(["nothing here"]) is None


def test_progress_fraction_and_summary() -> None:
    assert SyncProgress(50, 200).fraction == 0.25
    assert SyncProgress(50, None).fraction is None
    assert SyncProgress(50, 60, percent=40.0).fraction == 0.4
    s = SyncSummary("push", "rsync", "/home/me/p", "/root/p", 1, 2048, 1.25)
    assert summary_line(s, "gpu") == "pushed /home/me/p -> gpu:/root/p: 1 file, 2.0 KiB sent in 1.2 s (rsync)"
    pull = SyncSummary("pull", "sftp", "/l", "/r", 3, 10, 0.5, skipped_links=2)
    assert summary_line(pull, "gpu").startswith("pulled gpu:/r -> /l: 3 files, 10 B sent")
    assert "2 symlinks skipped" in summary_line(pull, "gpu")
    assert summary_json(s, "gpu")["bytes_sent"] == 2048


def test_transport_words() -> None:
    assert is_transport(["--config", "/c.toml", "_transport", "gpu", "gpu-tui", "rsync"])
    assert is_transport(["--config=/c.toml", "_transport", "gpu"])
    assert not is_transport(["run", "_transport", "--", "x"])  # an instance named _transport
    assert not is_transport(["_transport"])
    assert remote_command(["gpu-tui", "rsync", "--server", "-s", "."]) == "rsync --server -s ."
    assert remote_command(["-l", "root", "gpu-tui", "rsync", "--server"]) == "rsync --server"
    t = Transport("/my dir/config.toml", "gpu", None, python="/usr/bin/python3")
    assert t.rsh() == "/usr/bin/python3 -m gpu_tui --config '/my dir/config.toml' _transport gpu"
    assert "GPU_TUI_PASSWORD_GPU" not in t.environ({})


def test_transport_passes_the_password_only_in_the_environment() -> None:
    from pydantic import SecretStr

    t = Transport("/c.toml", "my-box.1", SecretStr("s3cret"))
    assert "s3cret" not in t.rsh()
    assert t.environ({"PATH": "/bin"}) == {"PATH": "/bin", "GPU_TUI_PASSWORD_MY_BOX_1": "s3cret"}
