"""`gpu-tui notify add|list|remove|test` as a user runs it: targets in a real (file) keyring and
never in the config or argv, tokens masked in every printout, exit codes 0 / 2 / 3, a dead target
named, and Apprise really sending to loopback servers."""

from __future__ import annotations

import base64
import configparser
import json
import subprocess
import sys
import time
from pathlib import Path

from argvwatch import argv_holding
from notifyserver import dead_port, notify_server
from sshhelp import cli_env

TOKEN = "tk_q7pZx9LmN2vB4cD6fG8hJ0kR"


def run(
    tmp: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None, watch: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI with a file keyring under `tmp`; with `watch`, no process's argv may hold it."""
    full = cli_env(tmp, keyring="keyrings.alt.file.PlaintextKeyring") | (env or {})
    with argv_holding(watch) as seen:
        proc = subprocess.run(
            [sys.executable, "-m", "gpu_tui", "--config", str(tmp / "config.toml"), "--lang", "en", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=full,
            timeout=90,
        )
    assert seen == [], f"a secret showed up in a process's argv: {seen}"
    return proc


def keyring_text(tmp: Path) -> str:
    """The file keyring's entries, decoded (keyrings.alt keeps them base64 in an ini file)."""
    f = tmp / "xdg-data" / "python_keyring" / "keyring_pass.cfg"
    if not f.exists():
        return ""
    ini = configparser.ConfigParser()
    ini.read(f)
    return "\n".join(
        f"{section} {key} {base64.b64decode(value).decode()}"
        for section in ini.sections()
        for key, value in ini[section].items()
    )


def test_add_list_test_remove(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[settings]\ncurrency = "¥"\n')
    with notify_server() as srv:
        ntfy = f"ntfy://{TOKEN}@127.0.0.1:{srv.port}/alerts-for-me"
        hook = f"json://127.0.0.1:{srv.port}/hook"
        added = run(tmp_path, "notify", "add", "-", "--events", "job_end,balance", stdin=ntfy + "\n", watch=TOKEN)
        assert added.returncode == 0, added.stderr
        assert added.stdout.startswith("added target 1: ntfy://") and TOKEN not in added.stdout
        assert "events: job_end, balance" in added.stdout
        assert run(tmp_path, "notify", "add", hook).returncode == 0  # an argument is accepted too
        # a secret: in the keyring, never in the config file
        assert TOKEN in keyring_text(tmp_path) and "notify_3atargets" in keyring_text(tmp_path)
        assert TOKEN not in (tmp_path / "config.toml").read_text()

        listed = run(tmp_path, "notify", "list")
        assert listed.returncode == 0 and TOKEN not in listed.stdout and "alerts-for-me" not in listed.stdout
        lines = listed.stdout.splitlines()
        assert lines[0].split() == ["N", "FROM", "SERVICE", "TARGET", "EVENTS"]
        assert lines[1].split()[:3] == ["1", "keyring", "ntfy"] and lines[1].split()[-1] == "job_end,balance"
        as_json = json.loads(run(tmp_path, "notify", "list", "--json").stdout)
        assert [t["source"] for t in as_json["targets"]] == ["keyring", "keyring"]
        assert as_json["targets"][1]["url"] == hook and "low_util" not in as_json["targets"][1]["events"]
        assert TOKEN not in json.dumps(as_json)

        tested = run(tmp_path, "notify", "test", watch=TOKEN)
        assert tested.returncode == 0, tested.stdout + tested.stderr
        assert [line.split()[0] for line in tested.stdout.splitlines()] == ["ok", "ok"] and TOKEN not in tested.stdout
        assert sorted(r.path for r in srv.requests) == ["/", "/hook"]
        sent = {r.path: r for r in srv.requests}
        assert sent["/"].headers["authorization"] == f"Bearer {TOKEN}" and sent["/"].json()["title"] == "gpu-tui test"
        only = run(tmp_path, "notify", "test", "json")
        assert only.returncode == 0 and len(srv.requests) == 3

        removed = run(tmp_path, "notify", "remove", "1")
        assert removed.returncode == 0 and TOKEN not in removed.stdout
        assert TOKEN not in keyring_text(tmp_path)
        left = json.loads(run(tmp_path, "notify", "list", "--json").stdout)["targets"]
        assert [(t["number"], t["url"]) for t in left] == [(1, hook)]


def test_a_dead_target_is_named_and_exits_3(tmp_path: Path) -> None:
    with notify_server() as srv, dead_port() as port:
        (tmp_path / "config.toml").write_text(
            f'[notify]\nurls = ["json://127.0.0.1:{srv.port}/alive", "json://127.0.0.1:{port}/dead"]\n'
        )
        t0 = time.monotonic()
        res = run(tmp_path, "notify", "test", "--timeout", "1")
        spent = time.monotonic() - t0
        assert res.returncode == 3, res.stdout + res.stderr
        assert f"FAILED  2 json://127.0.0.1:{port}/dead" in res.stdout
        assert res.stderr.strip() == f"gpu-tui: notify test: no answer from 2 json://127.0.0.1:{port}/dead"
        assert "ok      1" in res.stdout and [r.path for r in srv.requests] == ["/alive"]
        assert spent < 30
        listed = run(tmp_path, "notify", "list").stdout.splitlines()
        assert listed[1].split()[1] == "config"
        refused = run(tmp_path, "notify", "remove", "1")
        assert refused.returncode == 2 and "config file" in refused.stderr and len(refused.stderr.splitlines()) == 1


def test_refusals_are_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("")
    for args, stdin, words in [
        (("notify", "add", "foo://bar"), "", "Apprise cannot use this foo:// URL"),
        (("notify", "add", "-"), "not a url\n", "not a notification URL"),
        (("notify", "add", "-"), "\n", "no URL given"),
        (("notify", "test"), "", "no targets"),
        (("notify", "remove", "4"), "", "no target number 4"),
        (("notify", "add", "json://127.0.0.1/x", "--events", "idel"), "", "unknown event 'idel'"),
    ]:
        res = run(tmp_path, *args, stdin=stdin)
        assert res.returncode == 2, (args, res.stderr)
        assert words in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr
    assert keyring_text(tmp_path) == ""  # nothing stored on the way


def test_autodl_wechat_target_uses_the_stored_developer_token(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("")
    with notify_server() as srv:
        env = {"GPU_TUI_AUTODL_WECHAT_API": srv.base, "GPU_TUI_PASSWORD_PROVIDER_AUTODL": srv.wechat_token}
        added = run(tmp_path, "notify", "add", "autodl-wechat", env=env)
        assert added.returncode == 0 and "AutoDL WeChat" in added.stdout
        res = run(tmp_path, "notify", "test", "autodl-wechat", env=env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert srv.requests[0].headers["authorization"] == srv.wechat_token
        wrong = run(tmp_path, "notify", "test", env=env | {"GPU_TUI_PASSWORD_PROVIDER_AUTODL": "nope"})
        assert wrong.returncode == 3 and "FAILED  1 autodl-wechat" in wrong.stdout
