"""gpu-tui's section of ~/.ssh/config: written, updated and removed, the user's text untouched."""

from __future__ import annotations

import pytest

from gpu_tui.core.errors import InputError
from gpu_tui.core.sshsection import (
    BEGIN,
    END,
    HostBlock,
    alias_problem,
    blocks_in,
    remove_block,
    splice,
    user_aliases,
)

USER = """# my own config, keep me
Host *
    User alice   # a comment after a value
    ServerAliveInterval 30

Host lab
    HostName 10.0.0.5
"""


def block(alias: str, port: int = 22, key: str = "/k/id") -> HostBlock:
    return HostBlock(alias, "connect.example.com", port, "root", (key,), ("/home/me/.ssh/known_hosts", "/d/known"))


def test_first_write_puts_the_section_on_top_and_keeps_every_user_line() -> None:
    text = splice(USER, [block("gpu1", 23456)])
    lines = text.splitlines()
    assert lines[0] == BEGIN and END in lines
    end = lines.index(END)
    # the user's file follows, byte for byte
    assert "\n".join(lines[end + 1 :]).strip("\n") + "\n" == USER
    section = lines[: end + 1]
    assert "Host gpu1" in section and "    Port 23456" in section
    assert "    IdentityFile /k/id" in section
    assert "    UserKnownHostsFile /home/me/.ssh/known_hosts /d/known" in section
    assert "    StrictHostKeyChecking yes" in section
    # back to all hosts before the user's own top-level lines
    assert section[-2] == "Host *"


def test_update_replaces_one_block_and_keeps_the_others() -> None:
    text = splice(USER, [block("gpu1", 1), block("gpu2", 2)])
    again = splice(text, [block("gpu1", 99)])
    blocks = blocks_in(again)
    assert list(blocks) == ["gpu1", "gpu2"]
    assert "    Port 99" in blocks["gpu1"] and "    Port 2" in blocks["gpu2"]
    assert again.count(BEGIN) == 1 and again.endswith(USER)
    # writing the same again changes nothing
    assert splice(again, [block("gpu1", 99)]) == again
    # replace_all: exactly the given blocks
    only = splice(again, [block("gpu3")], replace_all=True)
    assert list(blocks_in(only)) == ["gpu3"] and only.endswith(USER)


def test_a_section_the_user_moved_is_updated_where_it_is() -> None:
    moved = USER + "\n" + "\n".join([BEGIN, "Host old", "    Port 1", "", "Host *", END]) + "\n# after\n"
    text = splice(moved, [block("gpu1")])
    assert text.startswith(USER) and text.endswith("# after\n")
    assert list(blocks_in(text)) == ["old", "gpu1"]


def test_remove_one_then_all() -> None:
    text = splice(USER, [block("gpu1"), block("gpu2")])
    one, removed = remove_block(text, ["gpu1", "nope"])
    assert removed == ["gpu1"] and list(blocks_in(one)) == ["gpu2"] and one.endswith(USER)
    none, removed = remove_block(one, None)
    assert removed == ["gpu2"] and none == USER
    # nothing of ours: untouched
    assert remove_block(USER, None) == (USER, [])
    # the last block out takes the section with it
    assert remove_block(splice(USER, [block("a")]), ["a"])[0] == USER
    assert remove_block(splice("", [block("a")]), ["a"])[0] == ""


def test_user_aliases_and_broken_sections() -> None:
    text = splice(USER, [block("gpu1")])
    assert user_aliases(text) == {"lab"}
    with pytest.raises(InputError, match="nothing ends it"):
        splice(BEGIN + "\nHost x\n", [block("a")])


def test_alias_and_path_checks() -> None:
    assert alias_problem("autodl-4090") is None and alias_problem("a.b_c") is None
    assert alias_problem("-oProxyCommand") and alias_problem(".hidden")
    spaced = HostBlock("a", "h", 22, "root", ("/my keys/id",), ("/k",))
    assert '    IdentityFile "/my keys/id"' in splice("", [spaced]).splitlines()
    with pytest.raises(InputError, match="quote"):
        splice("", [HostBlock("a", "h", 22, "root", ('/x"y',), ("/k",))])


def test_the_users_crlf_lines_and_form_feeds_come_back_byte_for_byte() -> None:
    from gpu_tui.core.sshsection import remove_block, splice

    user = "Host work\r\n    User alice\r\n\x0cHost other\r\n    HostName 10.0.0.2\r\n"
    blocks = [HostBlock("gpu", "127.0.0.1", 2222, "root", ("/k",), ("/kh",))]
    written = splice(user, blocks)
    assert written.endswith(user)  # the section goes at the top; the user's text follows untouched
    back, removed = remove_block(written, None)
    assert removed == ["gpu"] and back == user
