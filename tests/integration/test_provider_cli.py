"""`provider login`, `instances`, `import`, `start` and `shutdown --via-api` as a user runs them:
the real CLI in a child process, a loopback provider API (tests/providerservers.py) whose SSH
endpoints are real sshd fixtures, a real file keyring and config file."""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from providerservers import ProviderServer, provider_env
from sshhelp import cli_env

from gpu_tui.config.settings import load_settings

pytestmark = pytest.mark.sshd

USER_TEXT = """# my rented machines
[settings]
connect_timeout_seconds = 3.0

[[instances]]
name = "lab"
host = "10.0.0.5"  # the lab box, not from any provider
"""


@pytest.fixture
def runpod() -> Iterator[ProviderServer]:
    srv = ProviderServer("runpod", token="rp-key").start()
    try:
        yield srv
    finally:
        srv.stop()


def gpu_tui(
    tmp: Path,
    srv: ProviderServer,
    *args: str,
    token: str | None = None,
    stdin: str | None = None,
    keyring: str = "keyring.backends.fail.Keyring",
    timeout: float = 90,
) -> subprocess.CompletedProcess[str]:
    env = {**cli_env(tmp, keyring=keyring), **provider_env(srv)}
    if token is not None:
        env["GPU_TUI_PASSWORD_PROVIDER_RUNPOD"] = token
    if not token and token is not None:
        del env["GPU_TUI_PASSWORD_PROVIDER_RUNPOD"]
    return subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(tmp / "config.toml"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        input=stdin,
    )


def app_known_hosts(tmp: Path) -> Path:
    return tmp / "xdg-data" / "gpu-tui" / "known_hosts"


def test_import_reimport_and_instances(sshd_factory, runpod: ProviderServer, tmp_path: Path) -> None:
    box = sshd_factory("pod-a")
    runpod.add("podaaa", name="train-a", state="running", ssh=(box.host, box.port), price=0.74)
    runpod.add("podbbb", name="", state="stopped", ssh=(box.host, 1), price=0.35)
    cfg = tmp_path / "config.toml"
    cfg.write_text(USER_TEXT)

    res = gpu_tui(tmp_path, runpod, "import", "runpod", "--all", "--json")
    assert res.returncode == 0, res.stderr
    out = {i["id"]: i for i in json.loads(res.stdout)["imported"]}
    assert out["podaaa"]["action"] == "added" and out["podaaa"]["configured_as"] == "runpod-train-a"
    settings = load_settings(cfg)
    a = settings.instance("runpod-train-a")
    assert (a.host, a.port, a.user, a.provider, a.provider_id) == (box.host, box.port, "root", "runpod", "podaaa")
    assert a.hourly_rate == pytest.approx(0.74) and a.currency == "$"
    b = settings.instance("runpod-podbbb")
    assert b.host == "pending.invalid" and b.provider_id == "podbbb"  # stopped: no endpoint yet, imported anyway
    assert cfg.read_text().startswith(USER_TEXT.rstrip("\n"))  # the user's text and comments kept
    assert not app_known_hosts(tmp_path).exists() or box.host_public_key not in app_known_hosts(tmp_path).read_text()

    # re-import: same entries updated (price changed, the user's own key kept), no duplicates
    runpod.instances["podaaa"].price = 0.79
    text = cfg.read_text().replace('name = "runpod-train-a"', 'name = "runpod-train-a"\nworkdir = "/workspace"')
    cfg.write_text(text)
    res = gpu_tui(tmp_path, runpod, "import", "runpod", "podaaa", "podbbb")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("updated") == 2 and "added" not in res.stdout
    assert "note: these bill in $, settings.currency is ¥" in res.stdout
    settings = load_settings(cfg)
    assert [i.name for i in settings.instances] == ["lab", "runpod-train-a", "runpod-podbbb"]
    a = settings.instance("runpod-train-a")
    assert a.hourly_rate == pytest.approx(0.79) and a.workdir == "/workspace"

    res = gpu_tui(tmp_path, runpod, "instances", "--json")
    assert res.returncode == 0, res.stderr
    rows = {i["id"]: i for i in json.loads(res.stdout)["instances"]}
    assert rows["podaaa"]["configured_as"] == "runpod-train-a" and rows["podaaa"]["status"] == "running"
    assert rows["podbbb"]["status"] == "stopped" and rows["podbbb"]["provider_status"] == "EXITED"
    table = gpu_tui(tmp_path, runpod, "instances", "runpod")
    assert table.returncode == 0 and "runpod-train-a" in table.stdout and "$0.79/h" in table.stdout


def test_bad_token_and_api_down_write_nothing(runpod: ProviderServer, tmp_path: Path) -> None:
    runpod.add("podaaa", name="a", state="running", ssh=("127.0.0.1", 2222))
    cfg = tmp_path / "config.toml"
    cfg.write_text(USER_TEXT)
    res = gpu_tui(tmp_path, runpod, "import", "runpod", "--all", token="wrong-key")
    assert res.returncode == 3
    assert res.stderr.count("\n") == 1 and "refused the token" in res.stderr and "Unauthorized" in res.stderr
    assert "wrong-key" not in res.stderr and "Traceback" not in res.stderr
    runpod.down = True
    res = gpu_tui(tmp_path, runpod, "import", "runpod", "--all")
    assert res.returncode == 3 and res.stderr.count("\n") == 1 and "503" in res.stderr
    runpod.stop()
    res = gpu_tui(tmp_path, runpod, "instances", "runpod")
    assert res.returncode == 3 and res.stderr.count("\n") == 1 and "unreachable" in res.stderr
    assert cfg.read_text() == USER_TEXT
    res = gpu_tui(tmp_path, runpod, "import", "runpod", "--all", token="")
    assert res.returncode == 2 and "gpu-tui provider login runpod" in res.stderr


def test_login_tests_the_token_then_stores_it(runpod: ProviderServer, tmp_path: Path) -> None:
    file_keyring = "keyrings.alt.file.PlaintextKeyring"
    stored = tmp_path / "xdg-data" / "python_keyring" / "keyring_pass.cfg"
    res = gpu_tui(
        tmp_path,
        runpod,
        "provider",
        "login",
        "runpod",
        "--token-stdin",
        stdin="wrong\n",
        token="",
        keyring=file_keyring,
    )
    assert res.returncode == 3 and "refused the token" in res.stderr
    assert not stored.exists() or "provider_3arunpod" not in stored.read_text()  # keyrings.alt escapes ':'

    res = gpu_tui(
        tmp_path,
        runpod,
        "provider",
        "login",
        "runpod",
        "--token-stdin",
        stdin="rp-key\n",
        token="",
        keyring=file_keyring,
    )
    assert res.returncode == 0, res.stderr
    assert "provider_3arunpod" in stored.read_text() and base64.b64encode(b"rp-key").decode() in stored.read_text()
    assert "rp-key" not in res.stdout + res.stderr
    # the stored token is what the other commands use now
    res = gpu_tui(tmp_path, runpod, "instances", "runpod", "--json", token="", keyring=file_keyring)
    assert res.returncode == 0, res.stderr


def _entry(tmp: Path, name: str, provider_id: str, host: str, port: int, key: Path) -> None:
    (tmp / "config.toml").write_text(
        f'[settings]\nconnect_timeout_seconds = 3.0\n\n[[instances]]\nname = "{name}"\nhost = "{host}"\n'
        f'port = {port}\nprovider = "runpod"\nprovider_id = "{provider_id}"\nhourly_rate = 0.74\n'
        f'currency = "$"\nidentity_file = "{key}"\n'
    )


def test_start_waits_for_ssh_and_refreshes_the_endpoint(sshd_factory, runpod: ProviderServer, tmp_path: Path) -> None:
    box = sshd_factory("pod-s")
    box.stop()  # a stopped pod: its sshd is down, its port kept for when it comes back
    runpod.add("podsss", name="s", state="stopped", ssh=(box.host, box.port), on_start=box.start, boot_polls=2)
    _entry(tmp_path, "runpod-s", "podsss", "pending.invalid", 22, box.client_key_path)
    res = gpu_tui(tmp_path, runpod, "start", "runpod-s")
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "SSH answers at" in res.stdout and "starting" in res.stdout  # progress lines, then done
    assert box.is_running and runpod.instances["podsss"].starts == 1
    inst = load_settings(tmp_path / "config.toml").instance("runpod-s")
    assert (inst.host, inst.port) == (box.host, box.port)
    assert inst.hourly_rate == 0.69 and "hourly_rate = 0.69" in res.stdout  # the API's price, from now on
    db = sqlite3.connect(tmp_path / "xdg-data" / "gpu-tui" / "ledger.sqlite3")
    rows = db.execute("SELECT name, rate, closed_reason FROM intervals").fetchall()
    assert rows == [("runpod-s", 0.69, None)]


def test_shutdown_via_api_is_verified_by_the_api(sshd_factory, runpod: ProviderServer, tmp_path: Path) -> None:
    box = sshd_factory("pod-d")
    runpod.add("podddd", name="d", state="running", ssh=(box.host, box.port), on_stop=box.stop, stop_polls=1)
    _entry(tmp_path, "runpod-d", "podddd", box.host, box.port, box.client_key_path)
    res = gpu_tui(tmp_path, runpod, "shutdown", "runpod-d", "--via-api", "--yes")
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "verified by the RunPod API: EXITED" in res.stdout
    assert not box.is_running and runpod.calls("POST", "/stop")


def test_unreachable_over_ssh_is_stopped_through_the_api(sshd_factory, runpod: ProviderServer, tmp_path: Path) -> None:
    box = sshd_factory("pod-u")
    box.stop()  # SSH is gone, but the provider still bills it as running
    runpod.add("poduuu", name="u", state="running", ssh=(box.host, box.port), stop_polls=2)
    _entry(tmp_path, "runpod-u", "poduuu", box.host, box.port, box.client_key_path)
    res = gpu_tui(tmp_path, runpod, "shutdown", "runpod-u", "--yes")
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "verified by the RunPod API" in res.stdout and runpod.instances["poduuu"].state == "stopped"
    # without a token there is no second proof: NOT shut down, exit 3
    runpod.instances["poduuu"].state = "running"
    res = gpu_tui(tmp_path, runpod, "shutdown", "runpod-u", "--yes", token="")
    assert res.returncode == 3 and "NOT shut down: runpod-u" in res.stderr


@pytest.mark.parametrize("provider", ["vast", "autodl"])
async def test_start_and_api_stop_for_vast_and_autodl(provider: str, sshd_factory, tmp_path: Path) -> None:
    from pydantic import SecretStr

    from gpu_tui.config.settings import InstanceConfig
    from gpu_tui.services.providers import client_for
    from gpu_tui.services.providers.ops import start_instance, stop_via_api

    box = sshd_factory(f"{provider}-box")
    box.stop()
    srv = ProviderServer(provider, token="k").start()
    try:
        srv.add("4242", name="x", state="stopped", ssh=(box.host, box.port), on_start=box.start, on_stop=box.stop)
        client = client_for(provider, SecretStr("k"), base=srv.url)
        inst = InstanceConfig(name="x", host="pending.invalid", provider=provider, provider_id="4242")
        lines: list[str] = []
        started = await start_instance(inst, client, progress=lines.append, poll=0.2)
        assert started.ok, started.detail
        assert started.instance is not None and (started.instance.ssh_host, started.instance.ssh_port) == (
            box.host,
            box.port,
        )
        assert box.is_running and any("starting" in line for line in lines)
        stopped = await stop_via_api(inst, client, poll=0.2)
        assert stopped.stopped and "verified by the" in stopped.detail, stopped.detail
        assert not box.is_running
        again = await stop_via_api(inst, client, poll=0.2)  # already stopped: no second stop sent
        assert again.stopped and srv.instances["4242"].stops == 1
        quick = await start_instance(inst, client, wait=False)  # --no-wait: accepted, no polling
        assert quick.ok and srv.instances["4242"].starts == 2 and quick.instance is None
        await stop_via_api(inst, client, poll=0.2)
        # an API that never reports the stop: NOT shut down, however the request went
        srv.instances["4242"].state, srv.instances["4242"].stop_polls = "running", 10**6
        late = await stop_via_api(inst, client, poll=0.2, verify_seconds=1.0)
        assert not late.stopped and "NOT shut down" in late.detail
    finally:
        srv.stop()


def test_import_autodl_pro_in_yuan_writes_no_currency(tmp_path: Path) -> None:
    srv = ProviderServer("autodl", token="dev-token").start()
    try:
        srv.add(
            "pro-abc123", name="西北B区 4090", state="running", ssh=("connect.westb.seetacloud.com", 23456), price=1.98
        )
        res = gpu_tui(tmp_path, srv, "import", "autodl", "pro-abc123", "--json")
        assert res.returncode == 0, res.stderr
        inst = load_settings(tmp_path / "config.toml").instances[0]
        assert (inst.host, inst.port, inst.provider, inst.provider_id) == (
            "connect.westb.seetacloud.com",
            23456,
            "autodl",
            "pro-abc123",
        )
        assert inst.hourly_rate == pytest.approx(1.98) and inst.currency is None  # ¥, as settings
        assert "never-read-this" not in (tmp_path / "config.toml").read_text() + res.stdout  # root_password
        res = gpu_tui(tmp_path, srv, "import", "autodl", "nope")
        assert res.returncode == 2 and "no instance nope on this account; it has: pro-abc123" in res.stderr
    finally:
        srv.stop()


def test_import_on_a_terminal_without_ids_asks_which(runpod: ProviderServer, tmp_path: Path) -> None:
    import os

    runpod.add("podaaa", name="first", state="running", ssh=("127.0.0.1", 2201))
    runpod.add("podbbb", name="second", state="stopped", ssh=("127.0.0.1", 2202))
    master, slave = os.openpty()  # stdin is a terminal: the chooser, numbered as listed
    try:
        os.write(master, b"2\n")
        env = {**cli_env(tmp_path), **provider_env(runpod)}
        res = subprocess.run(
            [sys.executable, "-m", "gpu_tui", "--config", str(tmp_path / "config.toml"), "import", "runpod"],
            stdin=slave,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    finally:
        os.close(master)
        os.close(slave)
    assert res.returncode == 0, res.stderr
    assert "  1 " in res.stdout and "  2 " in res.stdout and "Import which?" in res.stdout
    assert [i.provider_id for i in load_settings(tmp_path / "config.toml").instances] == ["podbbb"]
