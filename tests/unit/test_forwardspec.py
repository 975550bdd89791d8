"""`PORT[:LOCAL]` as typed on `gpu-tui forward` and in the forward screen, and the URL shown."""

from __future__ import annotations

import pytest

from gpu_tui.core.forwardspec import PRESETS, ForwardSpec, local_url, loopback_only, parse_spec, preset_for


@pytest.mark.parametrize(
    ("text", "remote", "local"),
    [
        ("6006", 6006, 6006),
        ("6006:16006", 6006, 16006),
        (" 8888:0 ", 8888, 0),
        ("1:65535", 1, 65535),
    ],
)
def test_specs(text: str, remote: int, local: int) -> None:
    assert parse_spec(text) == ForwardSpec(remote, local)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "the instance port"),
        ("tb", "the instance port"),
        ("0", "the instance port"),
        ("65536", "the instance port"),
        ("6006:", "the local port"),
        ("6006:x", "the local port"),
        ("6006:1:2", "the local port"),
        (":6006", "the instance port"),
        ("-1", "the instance port"),
    ],
)
def test_bad_specs_say_which_part_and_how(text: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_spec(text)
    assert words in str(err.value) and "6006:16006" in str(err.value)


def test_urls_and_presets() -> None:
    assert local_url("127.0.0.1", 6006) == "http://127.0.0.1:6006"
    assert local_url("0.0.0.0", 80) == "http://127.0.0.1:80"
    assert local_url("::", 80) == "http://[::1]:80"
    assert local_url("::1", 8888) == "http://[::1]:8888"
    assert [p.port for p in PRESETS] == [6006, 8888, 7860, 8000]
    assert preset_for(6006) is not None and preset_for(6007) is None
    assert str(ForwardSpec(6006, 6006)) == "6006" and str(ForwardSpec(6006, 1)) == "6006:1"


def test_loopback_only() -> None:
    assert loopback_only("127.0.0.1") and loopback_only("127.0.0.5") and loopback_only("::1")
    assert loopback_only("localhost")
    assert not loopback_only("0.0.0.0") and not loopback_only("::") and not loopback_only("192.168.1.5")
    assert not loopback_only("myhost.lan")
