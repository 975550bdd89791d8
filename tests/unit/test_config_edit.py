"""Config edits for `gpu-tui add` / `remove`: atomic, validated, and the user's layout kept."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from gpu_tui.config.edit import HEADER, find_instance, remove_instance, upsert_instance
from gpu_tui.config.settings import load_settings
from gpu_tui.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config.example.toml"


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    shutil.copy(EXAMPLE, path)
    return path


def lines_changed(before: str, after: str) -> list[tuple[str, str]]:
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b), "the edit should change lines, not add or remove them"
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


def names(path: Path) -> list[str]:
    return [i.name for i in load_settings(path, must_exist=True).instances]


def test_add_appends_and_keeps_every_byte_before(cfg: Path) -> None:
    original = cfg.read_text(encoding="utf-8")
    fields = {
        "name": "vast-41234",
        "host": "ssh4.vast.ai",
        "port": 41234,
        "user": "root",
        "hourly_rate": 0.35,
        "provider": "vast",
        "identity_file": None,
    }
    assert upsert_instance(cfg, fields) == "added"
    text = cfg.read_text(encoding="utf-8")
    assert text.startswith(original)
    assert text[len(original) :] == (
        '\n[[instances]]\nname = "vast-41234"\nhost = "ssh4.vast.ai"\nport = 41234\nuser = "root"\n'
        'hourly_rate = 0.35\nprovider = "vast"\n'
    )
    assert names(cfg) == ["autodl-4090", "lab-a100", "vast-41234"]
    assert "identity_file" not in text[len(original) :]


def test_new_keys_are_written_in_config_order(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    upsert_instance(
        path,
        {"provider": "autodl", "port": 23456, "host": "h", "name": "a", "sync": {"local": "~/p", "exclude": (".git",)}},
    )
    body = path.read_text(encoding="utf-8").split("[[instances]]\n", 1)[1]
    assert body == (
        'name = "a"\nhost = "h"\nport = 23456\nprovider = "autodl"\nsync = {local = "~/p", exclude = [".git"]}\n'
    )
    assert load_settings(path).instances[0].sync.exclude == (".git",)


def test_update_by_name_changes_only_the_edited_lines(cfg: Path) -> None:
    original = cfg.read_text(encoding="utf-8")
    result = upsert_instance(
        cfg,
        {
            "name": "autodl-4090",
            "host": "connect.westb.seetacloud.com",
            "port": 30000,
            "hourly_rate": 2.5,
            "user": None,
        },
    )
    assert result == "updated"
    changed = lines_changed(original, cfg.read_text(encoding="utf-8"))
    # the values change; their comments and alignment stay
    assert changed == [
        ("port = 23456                           # default 22", "port = 30000                           # default 22"),
        (
            "hourly_rate = 1.98                     # in settings.currency; default 0",
            "hourly_rate = 2.5                     # in settings.currency; default 0",
        ),
    ]
    inst = load_settings(cfg).instance("autodl-4090")
    assert (inst.port, inst.hourly_rate, inst.workdir) == (30000, 2.5, "/root/autodl-tmp")


def test_update_adds_a_missing_key_inside_the_entry(cfg: Path) -> None:
    original = cfg.read_text(encoding="utf-8")
    upsert_instance(cfg, {"name": "autodl-4090", "host": "connect.westb.seetacloud.com", "identity_file": "~/.ssh/k"})
    text = cfg.read_text(encoding="utf-8")
    before_lab = original.index('[[instances]]\nname = "lab-a100"')
    anchor = 'sync = { local = "~/code/proj", remote = "proj", exclude = [".git", "__pycache__", "*.ckpt"] }\n'
    cut = original.index(anchor) + len(anchor)
    assert text == original[:cut] + 'identity_file = "~/.ssh/k"\n' + original[cut:]
    assert cut < before_lab
    assert load_settings(cfg).instance("autodl-4090").identity_file == "~/.ssh/k"


def test_update_by_host_and_user_when_the_port_changed(cfg: Path) -> None:
    # AutoDL re-issued the machine on another port; the suggested name differs
    fields = {"name": "autodl-westb-30001", "host": "connect.westb.seetacloud.com", "port": 30001, "user": "root"}
    assert find_instance(cfg, fields) == "autodl-4090"
    assert upsert_instance(cfg, fields) == "updated"
    settings = load_settings(cfg)
    assert len(settings.instances) == 2
    # it keeps its name: its keyring password is stored under it
    assert settings.instance("autodl-4090").port == 30001


def test_host_match_ignores_case_and_defaults_user_to_root(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[[instances]]\nname = "box"\nhost = "Gpu.Example.com"\n', encoding="utf-8")
    assert upsert_instance(path, {"name": "other", "host": "gpu.example.com", "port": 2200}) == "updated"
    assert [(i.name, i.port) for i in load_settings(path).instances] == [("box", 2200)]


def test_match_host_user_can_be_switched_off(cfg: Path) -> None:
    fields = {"name": "autodl-b", "host": "connect.westb.seetacloud.com", "port": 30001}
    assert find_instance(cfg, fields, match_host_user=False) is None
    assert upsert_instance(cfg, fields, match_host_user=False) == "added"
    assert names(cfg) == ["autodl-4090", "lab-a100", "autodl-b"]


def test_several_instances_behind_one_host_are_not_merged(cfg: Path) -> None:
    upsert_instance(
        cfg, {"name": "autodl-b", "host": "connect.westb.seetacloud.com", "port": 30001}, match_host_user=False
    )
    # two entries share root@connect.westb...: which one a new port belongs to is unknowable
    fields = {"name": "autodl-c", "host": "connect.westb.seetacloud.com", "port": 30002}
    assert find_instance(cfg, fields) is None
    assert upsert_instance(cfg, fields) == "added"
    assert len(names(cfg)) == 4


def test_name_match_wins_over_host_match(cfg: Path) -> None:
    fields = {"name": "lab-a100", "host": "connect.westb.seetacloud.com", "user": "root"}
    assert find_instance(cfg, fields) == "lab-a100"
    upsert_instance(cfg, fields)
    assert load_settings(cfg).instance("lab-a100").host == "connect.westb.seetacloud.com"


def test_remove_keeps_the_rest_byte_for_byte(cfg: Path) -> None:
    original = cfg.read_text(encoding="utf-8")
    start = original.index('[[instances]]\nname = "autodl-4090"')
    end = original.index('[[instances]]\nname = "lab-a100"')
    assert remove_instance(cfg, "autodl-4090") is True
    assert cfg.read_text(encoding="utf-8") == original[:start] + original[end:]
    assert names(cfg) == ["lab-a100"]


def test_remove_last_entry_and_unknown_name(cfg: Path) -> None:
    original = cfg.read_text(encoding="utf-8")
    assert remove_instance(cfg, "nope") is False
    assert cfg.read_text(encoding="utf-8") == original
    assert remove_instance(cfg, "lab-a100") is True
    text = cfg.read_text(encoding="utf-8")
    assert text == original[: original.index('\n[[instances]]\nname = "lab-a100"')]
    assert names(cfg) == ["autodl-4090"]


def test_remove_keeps_a_comment_that_introduces_the_next_entry(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[[instances]]\nname = "a"\nhost = "h"\n# inside a\nport = 1\n\n'
        '# the lab box\n[[instances]]\nname = "b"\nhost = "h2"\n',
        encoding="utf-8",
    )
    assert remove_instance(path, "a")
    assert path.read_text(encoding="utf-8") == '# the lab box\n[[instances]]\nname = "b"\nhost = "h2"\n'


def test_remove_on_missing_file(tmp_path: Path) -> None:
    assert remove_instance(tmp_path / "none.toml", "a") is False
    assert not (tmp_path / "none.toml").exists()


def test_missing_file_and_dirs_are_created(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "config.toml"
    assert upsert_instance(path, {"name": "a", "host": "10.0.0.5", "port": 22}) == "added"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(HEADER + "\n[[instances]]\n")
    assert [(i.name, i.host) for i in load_settings(path).instances] == [("a", "10.0.0.5")]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(path.parent) == ["config.toml"]


def test_mode_is_kept(cfg: Path) -> None:
    cfg.chmod(0o640)
    upsert_instance(cfg, {"name": "x", "host": "h"})
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o640
    remove_instance(cfg, "x")
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o640


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"name": "bad name", "host": "h"}, "name"),
        ({"name": "x", "host": "h", "port": 70000}, "65535"),
        ({"name": "x", "host": "h", "colour": "red"}, "unknown key 'colour'"),
        ({"name": "x"}, "host: required key is missing"),
        ({"name": "autodl-4090", "host": "h", "port": "ssh"}, "port"),
    ],
)
def test_invalid_edit_leaves_the_file_unchanged(cfg: Path, fields: dict[str, object], needle: str) -> None:
    original = cfg.read_bytes()
    with pytest.raises(ConfigError) as exc:
        upsert_instance(cfg, fields)
    assert needle in str(exc.value) and "left unchanged" in str(exc.value)
    assert cfg.read_bytes() == original
    assert sorted(os.listdir(cfg.parent)) == ["config.toml"], "no temp file left behind"


def test_invalid_new_file_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    with pytest.raises(ConfigError):
        upsert_instance(path, {"name": "x", "host": "h", "port": 0})
    assert not path.exists()


@pytest.mark.parametrize("key", ["password", "Password", "secret", "token", "api_token", "passwd"])
def test_secrets_are_refused_before_anything_is_written(cfg: Path, key: str) -> None:
    original = cfg.read_bytes()
    with pytest.raises(ValueError, match="keyring"):
        upsert_instance(cfg, {"name": "x", "host": "h", key: "hunter2"})
    with pytest.raises(ValueError):
        upsert_instance(cfg, {"name": "x", "host": "h", "sync": {key: "hunter2"}})
    assert cfg.read_bytes() == original


def test_a_broken_file_is_not_edited(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[[instances]\nname = 'a'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        upsert_instance(path, {"name": "b", "host": "h"})
    assert path.read_text(encoding="utf-8") == "[[instances]\nname = 'a'\n"


def test_inline_instances_array_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('instances = [{ name = "a", host = "h" }]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="inline array"):
        upsert_instance(path, {"name": "b", "host": "h2"})


def test_tables_after_instances_and_tricky_strings(tmp_path: Path) -> None:
    # a header-looking line inside a multi-line string or array must not split the entry
    original = (
        '[[instances]]\nname = "a"\nhost = "h"\nshutdown_command = """\n[[instances]]\n[x]\n"""\n'
        'sync = { exclude = [\n  "[y]",\n] }\n\n[keys]\nhelp = "f1"\n\n[[instances]]\nname = "b"\nhost = "h2"\n'
    )
    path = tmp_path / "config.toml"
    path.write_text(original, encoding="utf-8")
    upsert_instance(path, {"name": "a", "host": "h", "port": 5})
    upsert_instance(path, {"name": "b", "host": "h2", "port": 6})
    upsert_instance(path, {"name": "c", "host": "h3"})
    s = load_settings(path)
    assert [(i.name, i.port) for i in s.instances] == [("a", 5), ("b", 6), ("c", 22)]
    assert s.instance("a").shutdown_command == "[[instances]]\n[x]\n"
    assert s.keys == {"help": "f1"}
    text = path.read_text(encoding="utf-8")
    assert text.index("[keys]") < text.index('name = "b"'), "tables are not reordered"


def test_sub_table_belongs_to_its_entry(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[[instances]]\nname = "a"\nhost = "h"\n\n[instances.sync]\nlocal = "~/p"\n', encoding="utf-8")
    upsert_instance(path, {"name": "a", "host": "h", "port": 7})
    inst = load_settings(path).instance("a")
    assert (inst.port, inst.sync.local) == (7, "~/p")
    assert remove_instance(path, "a")
    assert "local" not in path.read_text(encoding="utf-8")


def test_crlf_file_stays_crlf(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'[[instances]]\r\nname = "a"\r\nhost = "h"\r\n')
    upsert_instance(path, {"name": "a", "host": "h", "port": 7})
    upsert_instance(path, {"name": "b", "host": "h2"})
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert [i.name for i in load_settings(path).instances] == ["a", "b"]


def test_symlinked_config_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "config.toml"
    real.parent.mkdir()
    shutil.copy(EXAMPLE, real)
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    upsert_instance(link, {"name": "x", "host": "h"})
    assert link.is_symlink()
    assert "x" in names(real)


def test_file_without_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[[instances]]\nname = "a"\nhost = "h"', encoding="utf-8")
    upsert_instance(path, {"name": "b", "host": "h2"})
    assert path.read_text(encoding="utf-8").startswith('[[instances]]\nname = "a"\nhost = "h"\n\n[[instances]]\n')
    upsert_instance(path, {"name": "b", "host": "h2", "port": 3})
    assert [(i.name, i.port) for i in load_settings(path).instances] == [("a", 22), ("b", 3)]


def test_remove_marker_deletes_a_key_and_keeps_the_rest(tmp_path: Path) -> None:
    from gpu_tui.config.edit import REMOVE

    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '# mine\n[[instances]]\nname = "a"  # the 4090\nhost = "h"\nworkdir = "/w"   # data disk\nhourly_rate = 1.0\n'
    )
    changes = {"name": "a", "workdir": REMOVE, "hourly_rate": 2.5}
    assert upsert_instance(cfg, changes, match_host_user=False) == "updated"
    assert cfg.read_text() == '# mine\n[[instances]]\nname = "a"  # the 4090\nhost = "h"\nhourly_rate = 2.5\n'
