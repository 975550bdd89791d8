"""Pasted login commands: every shape a provider console shows, and the ones we refuse."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tui.core.errors import InputError
from gpu_tui.core.logincmd import LoginSpec, guess_provider, parse_login, suggest_name

KEY = "~/.ssh/id_ed25519"

GOOD = [
    # AutoDL's console
    ("ssh -p 23456 root@connect.westb.seetacloud.com", ("connect.westb.seetacloud.com", 23456, "root", None)),
    ("  ssh -p 23456 root@connect.westb.seetacloud.com \n", ("connect.westb.seetacloud.com", 23456, "root", None)),
    ("$ ssh -p 23456 root@connect.westb.seetacloud.com", ("connect.westb.seetacloud.com", 23456, "root", None)),
    ("'ssh -p 23456 root@region-41.seetacloud.com'", ("region-41.seetacloud.com", 23456, "root", None)),
    ('"ssh -p 23456 root@connect.nmb1.seetacloud.com"', ("connect.nmb1.seetacloud.com", 23456, "root", None)),
    ("`ssh -p 23456 root@connect.westb.seetacloud.com`", ("connect.westb.seetacloud.com", 23456, "root", None)),
    (
        "ssh\u00a0-p\u00a023456\u3000root@connect.westb.seetacloud.com\u200b",
        ("connect.westb.seetacloud.com", 23456, "root", None),
    ),
    # RunPod: options after the destination, and its proxy's pod-id user
    (f"ssh root@213.173.108.12 -p 17445 -i {KEY}", ("213.173.108.12", 17445, "root", KEY)),
    (f"ssh abc123xyz-64410c1e@ssh.runpod.io -i {KEY}", ("ssh.runpod.io", 22, "abc123xyz-64410c1e", KEY)),
    # vast.ai: a port forward is not an error
    ("ssh -p 41234 root@ssh4.vast.ai -L 8080:localhost:8080", ("ssh4.vast.ai", 41234, "root", None)),
    ("ssh -p 41234 -L8080:localhost:8080 root@ssh4.vast.ai", ("ssh4.vast.ai", 41234, "root", None)),
    # short forms
    ("ubuntu@gpu.example.com:2222", ("gpu.example.com", 2222, "ubuntu", None)),
    ("ubuntu@gpu.example.com", ("gpu.example.com", 22, "ubuntu", None)),
    ("gpu.example.com", ("gpu.example.com", 22, "root", None)),
    ("10.0.0.5", ("10.0.0.5", 22, "root", None)),
    ("ssh://alice@gpu.example.com:2200", ("gpu.example.com", 2200, "alice", None)),
    ("ssh ssh://alice@gpu.example.com:2200/", ("gpu.example.com", 2200, "alice", None)),
    # IPv6
    ("[::1]:2222", ("::1", 2222, "root", None)),
    ("user@[fe80::1]:22", ("fe80::1", 22, "user", None)),
    ("ssh -p 2222 root@[2001:db8::7]", ("2001:db8::7", 2222, "root", None)),
    ("ssh -6 root@2001:db8::7", ("2001:db8::7", 22, "root", None)),
    # ssh options, the way OpenSSH reads them
    ("ssh -l alice gpu.example.com", ("gpu.example.com", 22, "alice", None)),
    ("ssh -i ~/.ssh/key -p 2222 user@host", ("host", 2222, "user", "~/.ssh/key")),
    ("ssh -o Port=2222 -o User=ubuntu host", ("host", 2222, "ubuntu", None)),
    ("ssh -oPort=2222 -oUser=ubuntu host", ("host", 2222, "ubuntu", None)),
    ('ssh -o "Port 2222" -o IdentityFile=~/k host', ("host", 2222, "root", "~/k")),
    ("ssh -o StrictHostKeyChecking=no -o HostName=10.1.1.1 gpubox", ("10.1.1.1", 22, "root", None)),
    ("ssh -p2222 host", ("host", 2222, "root", None)),
    ("ssh -tt -vvv -Cp 2222 host", ("host", 2222, "root", None)),
    ("ssh -4 -A -a -C -f -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y host", ("host", 22, "root", None)),
    (
        "ssh -J jump -R 9000:localhost:9000 -D 1080 -F cfg -c aes128-ctr -m hmac-sha2-256 -E log -b 0.0.0.0 "
        "-S sock -w any -Q cipher -O check -B eth0 -e none -I pkcs11 -W h:1 -P tag host",
        ("host", 22, "root", None),
    ),
    ("/usr/bin/ssh -p 2222 host", ("host", 2222, "root", None)),
    ("ssh -- root@host", ("host", 22, "root", None)),
    # the first value given wins, as in OpenSSH
    ("ssh -l alice bob@host", ("host", 22, "alice", None)),
    ("ssh -p 2222 host:3333", ("host", 2222, "root", None)),
    ("ssh bob@host -l alice", ("host", 22, "bob", None)),
    ("TERM=xterm ssh -p 2222 host", ("host", 2222, "root", None)),
]


@pytest.mark.parametrize(("text", "expected"), GOOD, ids=[g[0][:50] for g in GOOD])
def test_parses_real_shaped_logins(text: str, expected: tuple[str, int, str, str | None]) -> None:
    spec = parse_login(text)
    assert (spec.host, spec.port, spec.user, spec.identity_file) == expected


BAD = [
    ("", ["empty", "paste"]),
    ("   \n ", ["empty"]),
    ("ssh", ["no host"]),
    ("ssh -p 2222", ["no host"]),
    ("ssh -p abc host", ["'abc'", "not a number", "-p"]),
    ("ssh -p 70000 host", ["70000", "1 and 65535"]),
    ("ssh -p 0 host", ["'0'", "1 and 65535"]),
    ("root@host:abc", ["'abc'", "not a number"]),
    ("root@host:", ["not a number"]),
    ("ssh host ls -la", ["extra words", "'host'", "remote command"]),
    ("ssh -p 22 root@host nvidia-smi", ["extra words"]),
    ("ssh -p 22 root@host\nhunter2", ["extra words"]),
    ("telnet host", ["'telnet' is not ssh"]),
    ("mosh root@host", ["'mosh' is not ssh"]),
    ("ssh -Z host", ["no option -Z"]),
    ("ssh host -p", ["-p", "no value"]),
    ("ssh -o Port host", ["-o", "Key=Value"]),
    ("ssh -o Port=x host", ["'x'", "not a number"]),
    ("ssh 'root@host", ["quote is not closed"]),
    ("ssh @host", ["no user"]),
    ("ssh root@", ["no host"]),
    ("ssh -l 'bad user' host", ["'bad user'", "login name"]),
    ("ssh 'ro;ot'@host", ["login name"]),
    ("ssh -- -host", ["'-host'", "not a host"]),
    ("ssh 'ho st'", ["not a host"]),
    ("ssh [::1", ["'['"]),
    ("ssh [::1]x", ["after ']'"]),
    ("ssh ssh://host/path", ["path"]),
    ("ssh -i '' host", ["-i"]),
    ("-p 22 host", ["is not ssh"]),
]


@pytest.mark.parametrize(("text", "needles"), BAD, ids=[b[0][:40] or "empty" for b in BAD])
def test_refuses_with_one_clear_message(text: str, needles: list[str]) -> None:
    with pytest.raises(InputError) as exc:
        parse_login(text)
    msg = str(exc.value)
    assert msg.startswith("login command: ")
    assert "\n" not in msg
    for needle in needles:
        assert needle in msg


def test_a_trailing_word_is_not_echoed() -> None:
    # a password pasted after the command must not be printed back
    with pytest.raises(InputError) as exc:
        parse_login("ssh -p 22 root@host hunter2")
    assert "hunter2" not in str(exc.value)


@pytest.mark.parametrize(
    "text",
    [
        "sshpass -p secret ssh host",
        "sshpass -p secret ssh -p 2222 root@host",
        "/usr/bin/sshpass -psecret ssh host",
        "SSHPASS=secret sshpass -e ssh host",
        "MY_PASSWORD=secret ssh host",
    ],
)
def test_passwords_in_commands_are_refused_without_echo(text: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_login(text)
    msg = str(exc.value)
    assert "secret" not in msg
    assert "password" in msg and "--password-stdin" in msg


@given(st.text(max_size=200))
@settings(max_examples=500, deadline=None)
def test_only_input_errors_on_arbitrary_text(text: str) -> None:
    try:
        spec = parse_login(text)
    except InputError:
        return
    assert 1 <= spec.port <= 65535
    assert spec.host and not re.search(r"\s", spec.host)
    assert re.fullmatch(r"[A-Za-z0-9._-]+", spec.user)


ssh_words = st.lists(
    st.sampled_from(
        ["ssh", "-p", "2222", "-p2222", "root@h", "h", "-o", "Port=1", "-i", "k", "-L", "1:h:1", "--", "-v", "x"]
    ),
    max_size=8,
)


@given(ssh_words)
@settings(max_examples=300, deadline=None)
def test_only_input_errors_on_ssh_like_text(words: list[str]) -> None:
    try:
        parse_login(" ".join(words))
    except InputError:
        pass


@pytest.mark.parametrize(
    ("host", "provider"),
    [
        ("connect.westb.seetacloud.com", "autodl"),
        ("region-41.seetacloud.com", "autodl"),
        ("connect.bjb1.autodl.com", "autodl"),
        ("x.autodl.art", "autodl"),
        ("CONNECT.WESTB.SEETACLOUD.COM.", "autodl"),
        ("ssh.runpod.io", "runpod"),
        ("abc.proxy.runpod.net", "runpod"),
        ("ssh4.vast.ai", "vast"),
        ("vast.ai", "vast"),
        ("213.173.108.12", "generic"),
        ("::1", "generic"),
        ("gpu.lab.example.edu", "generic"),
        ("notseetacloud.com", "generic"),
        ("seetacloud.com.evil.example", "generic"),
    ],
)
def test_guess_provider(host: str, provider: str) -> None:
    assert guess_provider(host) == provider


@pytest.mark.parametrize(
    ("spec", "provider", "name"),
    [
        (LoginSpec("connect.westb.seetacloud.com", 23456), "autodl", "autodl-westb-23456"),
        (LoginSpec("region-41.seetacloud.com", 23456), "autodl", "autodl-region-41-23456"),
        (LoginSpec("1.2.3.4", 23456), "autodl", "autodl-23456"),
        (LoginSpec("213.173.108.12", 17445), "runpod", "runpod-17445"),
        (LoginSpec("ssh.runpod.io", 22, "abc123xyz-64410c1e"), "runpod", "runpod-abc123xyz"),
        (LoginSpec("ssh4.vast.ai", 41234), "vast", "vast-41234"),
        (LoginSpec("gpu.lab.example.edu"), "generic", "gpu.lab.example.edu"),
        (LoginSpec("213.173.108.12", 17445), "generic", "213.173.108.12-17445"),
        (LoginSpec("fe80::1", 2222), "generic", "fe80-1-2222"),
        (LoginSpec("My_Box"), "generic", "my_box"),
    ],
)
def test_suggest_name(spec: LoginSpec, provider: str, name: str) -> None:
    assert suggest_name(spec, provider, set()) == name


def test_suggest_name_skips_taken_names_ignoring_case() -> None:
    spec = LoginSpec("ssh4.vast.ai", 41234)
    assert suggest_name(spec, "vast", {"vast-41234"}) == "vast-41234-2"
    assert suggest_name(spec, "vast", {"VAST-41234", "vast-41234-2"}) == "vast-41234-3"


def test_suggest_name_is_always_config_valid() -> None:
    long_host = "a" * 70 + ".example.com"
    name = suggest_name(LoginSpec(long_host, 65535), "generic", set())
    assert len(name) <= 64 and re.fullmatch(r"[A-Za-z0-9._-]+", name)
    taken = {name}
    second = suggest_name(LoginSpec(long_host, 65535), "generic", taken)
    assert second.endswith("-2") and len(second) <= 64 and second not in taken


@given(st.text(alphabet=st.characters(codec="ascii"), min_size=1, max_size=80), st.integers(1, 65535))
@settings(max_examples=200, deadline=None)
def test_suggested_names_match_the_config_pattern(host: str, port: int) -> None:
    name = suggest_name(LoginSpec(host, port), guess_provider(host), {"instance"})
    assert 1 <= len(name) <= 64 and re.fullmatch(r"[A-Za-z0-9._-]+", name)
