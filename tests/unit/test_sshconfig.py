"""~/.ssh/config hosts for `gpu-tui add --from-ssh-config`, read with OpenSSH's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_tui.config.sshconfig import SshConfigHost, read_ssh_config
from gpu_tui.core.errors import InputError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def hosts(path: Path) -> dict[str, SshConfigHost]:
    return {h.alias: h for h in read_ssh_config(path)}


def test_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_ssh_config(tmp_path / "nope") == []


def test_basic_hosts_and_defaults(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "config",
        """# my machines
Host autodl
    HostName connect.westb.seetacloud.com
    Port 23456
    User root

Host lab
    hostname=gpu.lab.example.edu
    USER = alice
    IdentityFile ~/.ssh/id_ed25519
    IdentityFile ~/.ssh/id_rsa

Host bare
""",
    )
    got = read_ssh_config(cfg)
    assert [h.alias for h in got] == ["autodl", "lab", "bare"]
    assert got[0] == SshConfigHost("autodl", "connect.westb.seetacloud.com", 23456, "root", None)
    assert got[1] == SshConfigHost("lab", "gpu.lab.example.edu", 22, "alice", "~/.ssh/id_ed25519")
    assert got[2] == SshConfigHost("bare", "bare", 22, None, None)


def test_several_aliases_quotes_and_comments(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "config",
        """Host a b "c"   # three at once
  Port=2200
  IdentityFile "~/.ssh/my key"  # a space in the name
  User bob#not-a-comment
""",
    )
    got = hosts(cfg)
    assert list(got) == ["a", "b", "c"]
    assert {h.port for h in got.values()} == {2200}
    assert got["c"].identity_file == "~/.ssh/my key"
    assert got["a"].user == "bob#not-a-comment"


def test_wildcards_are_not_listed_but_apply_first_value_wins(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "config",
        """Host *.corp
    User corpuser

Host gpu1.corp
    User someone-else
    Port 2201

Host gpu? !gpu9
    Port 2300

Host gpu1 gpu9
    Port 2400

Host *
    User defaultuser
    Port 999
    IdentityFile ~/.ssh/default
""",
    )
    got = hosts(cfg)
    assert list(got) == ["gpu1.corp", "gpu1", "gpu9"]
    # the earlier wildcard block wins over the later concrete one
    assert (got["gpu1.corp"].user, got["gpu1.corp"].port) == ("corpuser", 2201)
    assert (got["gpu1"].port, got["gpu1"].user) == (2300, "defaultuser")
    # negated: gpu? does not apply to gpu9
    assert got["gpu9"].port == 2400
    assert got["gpu9"].identity_file == "~/.ssh/default"


def test_host_star_at_the_top_wins(tmp_path: Path) -> None:
    cfg = write(tmp_path / "config", "Host *\n  User first\n\nHost box\n  User second\n  Port 2\n")
    assert hosts(cfg)["box"] == SshConfigHost("box", "box", 2, "first", None)


def test_settings_before_any_host_apply_to_all(tmp_path: Path) -> None:
    cfg = write(tmp_path / "config", "User global\n\nHost box\n  User mine\n")
    assert hosts(cfg)["box"].user == "global"


def test_pattern_matching_ignores_case(tmp_path: Path) -> None:
    cfg = write(tmp_path / "config", "Host BOX\n\nHost box*\n  Port 7\n")
    assert hosts(cfg)["BOX"].port == 7


def test_hostname_token_is_expanded(tmp_path: Path) -> None:
    cfg = write(tmp_path / "config", "Host gpu7\n  HostName %h.lab.example.edu\n")
    assert hosts(cfg)["gpu7"].hostname == "gpu7.lab.example.edu"


def test_match_blocks_are_skipped(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "config",
        """Match host box exec "true"
    User matched
    Port 1111

Host box
    Port 2222
""",
    )
    assert hosts(cfg)["box"] == SshConfigHost("box", "box", 2222, None, None)


def test_include_relative_glob_and_missing(tmp_path: Path) -> None:
    ssh = tmp_path / ".ssh"
    write(ssh / "conf.d" / "10-autodl.conf", "Host autodl-a\n  HostName connect.westb.seetacloud.com\n  Port 10001\n")
    write(ssh / "conf.d" / "20-vast.conf", "Host vast-b\n  HostName ssh4.vast.ai\n  Port 41234\n")
    write(ssh / "conf.d" / "README", "Host not-included\n")
    cfg = write(
        ssh / "config",
        """Include conf.d/*.conf
Include does-not-exist.conf
Include ~/definitely-missing-gpu-tui-test/*.conf

Host after
""",
    )
    got = read_ssh_config(cfg)
    assert [h.alias for h in got] == ["autodl-a", "vast-b", "after"]
    assert got[0].port == 10001 and got[1].hostname == "ssh4.vast.ai"


def test_include_absolute_path(tmp_path: Path) -> None:
    other = write(tmp_path / "elsewhere" / "extra", "Host extra\n  Port 5\n")
    cfg = write(tmp_path / ".ssh" / "config", f'Include "{other}"\n')
    assert hosts(cfg)["extra"].port == 5


def test_include_resolves_relative_to_the_top_level_file(tmp_path: Path) -> None:
    ssh = tmp_path / ".ssh"
    write(ssh / "a" / "first", "Include second\n")
    write(ssh / "second", "Host deep\n  Port 9\n")
    cfg = write(ssh / "config", "Include a/first\n")
    assert hosts(cfg)["deep"].port == 9


def test_include_inside_host_block_is_conditional(tmp_path: Path) -> None:
    ssh = tmp_path / ".ssh"
    write(ssh / "inc", "User from-include\nHost other\n  Port 3\n")
    cfg = write(ssh / "config", "Host box\n  Include inc\n  Port 4\n\nHost other\n")
    got = hosts(cfg)
    assert got["box"].user == "from-include" and got["box"].port == 4
    # the included `Host other` block applies only where the outer `Host box` matches too
    assert got["other"] == SshConfigHost("other", "other", 22, None, None)


def test_include_inside_match_never_applies(tmp_path: Path) -> None:
    ssh = tmp_path / ".ssh"
    write(ssh / "inc", "Host hidden\n  Port 3\nHost *\n  User nobody\n")
    cfg = write(ssh / "config", "Match all\n  Include inc\nHost box\n")
    assert read_ssh_config(cfg) == [SshConfigHost("box", "box", 22, None, None)]


def test_include_loop_is_refused(tmp_path: Path) -> None:
    cfg = write(tmp_path / ".ssh" / "config", "Include config\nHost box\n")
    with pytest.raises(InputError, match="Include nests deeper than 16"):
        read_ssh_config(cfg)


def test_duplicate_alias_listed_once(tmp_path: Path) -> None:
    cfg = write(tmp_path / "config", "Host box\n  Port 1\nHost box\n  Port 2\n")
    got = read_ssh_config(cfg)
    assert len(got) == 1 and got[0].port == 1


@pytest.mark.parametrize("port", ["ssh", "70000", "0", "-1", "22x"])
def test_bad_port_names_file_and_line(tmp_path: Path, port: str) -> None:
    cfg = write(tmp_path / "config", f"Host ok\n  Port 22\n\nHost box\n  Port {port}\n")
    with pytest.raises(InputError) as exc:
        read_ssh_config(cfg)
    assert f"{cfg}:5:" in str(exc.value) and repr(port) in str(exc.value)


def test_bad_port_in_an_included_file_names_that_file(tmp_path: Path) -> None:
    inc = write(tmp_path / ".ssh" / "inc", "\nHost x\n  Port nope\n")
    cfg = write(tmp_path / ".ssh" / "config", "Include inc\n")
    with pytest.raises(InputError, match=f"{inc}:3:"):
        read_ssh_config(cfg)


def test_unclosed_quote_names_file_and_line(tmp_path: Path) -> None:
    cfg = write(tmp_path / "config", 'Host box\n  IdentityFile "~/.ssh/k\n')
    with pytest.raises(InputError, match=f"{cfg}:2:"):
        read_ssh_config(cfg)
