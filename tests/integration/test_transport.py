"""SshHost against real OpenSSH sshd: auth, host keys, down and frozen servers, literal commands."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from sshhelp import ssh_host

from gpu_tui.core.errors import AuthFailed, ConnectionLost, HostKeyChanged, HostKeyUnknown, Unreachable
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.models import GpuErrorKind
from gpu_tui.remote.quoting import quote
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services.status import sample_host

pytestmark = pytest.mark.sshd


async def test_key_auth_runs_commands_and_fake_nvidia_smi_is_first(sshd_instance, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    try:
        res = await host.run("command -v nvidia-smi")
        assert res.ok and res.stdout.strip() == str(sshd_instance.bin_dir / "nvidia-smi")
        res = await host.run(" ".join(nvsmi.query_gpu_argv()))
        rows = nvsmi.parse_rows(res.stdout)
        assert rows and rows[0].memory_total_mib and rows[0].name
    finally:
        await host.close()


async def test_password_auth_and_wrong_password(sshd_instance, password_user, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path, user=password_user.name, password=password_user.password, use_key=False)
    await host.connect()
    assert (await host.run("id -un")).stdout.strip() == password_user.name
    await host.close()
    bad = ssh_host(
        sshd_instance, tmp_path, user=password_user.name, password="wrong-" + password_user.password, use_key=False
    )
    with pytest.raises(AuthFailed) as info:
        await bad.connect()
    assert password_user.password not in str(info.value)


async def test_unknown_host_key_is_refused_until_trusted(sshd_instance, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path, trust=False)
    with pytest.raises(HostKeyUnknown) as info:
        await host.connect()
    assert info.value.fingerprint == sshd_instance.host_key_fingerprint
    assert "unknown host key" in str(info.value)
    host.trust_presented_key(info.value.key_line)
    await host.connect()
    assert (await host.run("echo ok")).stdout == "ok\n"
    await host.close()


async def test_changed_host_key_is_refused(sshd_instance, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    await host.close()
    sshd_instance.regenerate_host_key()
    with pytest.raises(HostKeyChanged) as info:
        await host.connect()
    assert "host key changed" in str(info.value)
    assert info.value.fingerprint == sshd_instance.host_key_fingerprint


async def test_down_instance_is_unreachable_fast(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.stop()
    host = ssh_host(sshd_instance, tmp_path, timeout=3)
    t0 = time.monotonic()
    with pytest.raises(Unreachable, match="refused"):
        await host.connect()
    assert time.monotonic() - t0 < 3


async def test_frozen_sshd_costs_at_most_the_connect_timeout(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.freeze()
    host = ssh_host(sshd_instance, tmp_path, timeout=1.5)
    t0 = time.monotonic()
    with pytest.raises(Unreachable):
        await host.connect()
    assert time.monotonic() - t0 < 4
    sshd_instance.thaw()


async def test_frozen_link_is_detected_by_keepalive(sshd_instance, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path, keepalive=(1.0, 2))
    await host.connect()
    sshd_instance.freeze()
    t0 = time.monotonic()
    reason = await asyncio.wait_for(host.wait_closed(), 10)
    assert time.monotonic() - t0 < 6
    assert reason is not None
    assert not host.connected
    with pytest.raises(ConnectionLost):
        await host.run("true")
    sshd_instance.thaw()
    await host.connect()  # same host object reconnects after the server is back
    assert (await host.run("echo back")).stdout == "back\n"
    await host.close()


NASTY = [
    "",
    " ",
    "a b",
    "'",
    '"',
    "$(touch /tmp/pwned)",
    "`id`",
    "a;b",
    "x\ny",
    "\\",
    "*",
    "~",
    "-n",
    "ü 漢字",
    "$HOME",
]


async def test_any_string_arrives_literally_over_ssh(sshd_instance, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    try:
        for s in NASTY:
            res = await host.run("printf %s " + quote(s))
            assert res.stdout == s, s
    finally:
        await host.close()
    assert not Path("/tmp/pwned").exists()


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("driver_failed", GpuErrorKind.DRIVER_FAILED),
        ("version_mismatch", GpuErrorKind.VERSION_MISMATCH),
        ("gpu_lost", GpuErrorKind.GPU_LOST),
        ("no_devices", GpuErrorKind.NO_GPU),
    ],
)
async def test_sample_reports_gpu_error_states(sshd_factory, tmp_path: Path, mode: str, kind: GpuErrorKind) -> None:
    inst = sshd_factory("broken", mode=mode)
    st = await sample_host(ssh_host(inst, tmp_path), 2.0)
    assert st.online and st.error is None
    assert st.gpu_error is not None and st.gpu_error.kind == kind
    assert st.as_json()["gpu_error"] == st.gpu_error.reason


async def test_sample_without_nvidia_smi_is_no_gpu(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.remove_nvidia_smi()
    st = await sample_host(ssh_host(sshd_instance, tmp_path), 0.1)
    assert st.online and st.gpu_error is not None and st.gpu_error.kind == GpuErrorKind.NOT_FOUND
    assert st.gpus == [] and st.stats is not None and st.stats.uptime_seconds is not None


async def test_streamed_lines_are_exactly_the_output(sshd_instance, tmp_path: Path) -> None:
    # asyncssh's line iterator ends with a spurious '' when EOF comes while it waits.
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    try:
        for _ in range(5):
            async with host.stream("printf 'a\\n\\nb\\n'; printf 'err\\n' >&2") as lines:
                got = [line async for line in lines]
            assert sorted(got) == sorted(["a", "", "b", "err"]), got
            assert await lines.wait_exit() == 0
        async with host.stream("echo x; exit 7") as lines:
            assert [line async for line in lines] == ["x"]
            assert await lines.wait_exit() == 7
    finally:
        await host.close()


def _ciphers(host: SshHost) -> tuple[str, str]:
    conn = host._conn  # the negotiated cipher is asyncssh's to tell, not part of SshHost's API
    assert conn is not None
    return conn.get_extra_info("send_cipher"), conn.get_extra_info("recv_cipher")


async def test_aes_gcm_is_negotiated_and_a_users_ciphers_still_win(sshd_instance, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    try:
        assert _ciphers(host) == ("aes128-gcm@openssh.com", "aes128-gcm@openssh.com")
    finally:
        await host.close()
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  Ciphers aes256-ctr\n")
    host = ssh_host(sshd_instance, tmp_path, ssh_config=config)
    await host.connect()
    try:
        assert _ciphers(host) == ("aes256-ctr", "aes256-ctr")
    finally:
        await host.close()
