"""`gpu-tui conda NAME mirror ...` on a real sshd instance (HOME is the fixture's): files written,
backed up once, restored by `default`; and the environment check's index report against a
loopback HTTP server standing in for a mirror."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui

pytestmark = pytest.mark.sshd

OLD_CONDARC = "# my settings\nauto_activate_base: false\nchannels:\n  - https://old.example/main\n"


def test_mirror_written_backed_up_and_restored(sshd_instance, tmp_path: Path) -> None:
    home = sshd_instance.home()
    condarc = home / ".condarc"
    pip_conf = home / ".config" / "pip" / "pip.conf"
    backup = home / ".gpu-tui" / "mirror-backup"
    condarc.write_text(OLD_CONDARC)
    assert not pip_conf.exists()

    res = run_gpu_tui(tmp_path, [sshd_instance], "conda", sshd_instance.name, "mirror", "tuna", timeout=120)
    assert res.returncode == 0, res.stderr
    text = condarc.read_text()
    assert "  - https://mirrors.tuna.tsinghua.edu.cn/anaconda/pkgs/main\n" in text
    assert "auto_activate_base: false" in text and "old.example" not in text
    assert pip_conf.read_text() == "[global]\nindex-url = https://pypi.tuna.tsinghua.edu.cn/simple\n"
    assert (backup / "condarc").read_text() == OLD_CONDARC and (backup / "pip.conf.absent").exists()
    # the test machine has no way out: the warning says so, and the files are written anyway
    if "does not answer" in res.stderr:
        assert "written anyway" in res.stderr
    assert "conda clean -i" in res.stdout

    # another mirror keeps the first backup
    res = run_gpu_tui(tmp_path, [sshd_instance], "conda", sshd_instance.name, "mirror", "ustc", timeout=120)
    assert res.returncode == 0, res.stderr
    assert "mirrors.ustc.edu.cn/anaconda/pkgs/main" in condarc.read_text() and "tuna" not in condarc.read_text()
    assert "https://mirrors.ustc.edu.cn/pypi/simple" in pip_conf.read_text()
    assert (backup / "condarc").read_text() == OLD_CONDARC

    res = run_gpu_tui(tmp_path, [sshd_instance], "conda", sshd_instance.name, "mirror", "default", timeout=120)
    assert res.returncode == 0, res.stderr
    assert condarc.read_text() == OLD_CONDARC and not pip_conf.exists() and not backup.exists()
    assert "restored" in res.stdout

    # no backup any more: `default` takes only the mirror keys out of a hand-made config
    condarc.write_text("auto_activate_base: false\ndefault_channels:\n  - https://x/main\n")
    res = run_gpu_tui(tmp_path, [sshd_instance], "conda", sshd_instance.name, "mirror", "default", timeout=120)
    assert res.returncode == 0 and condarc.read_text() == "auto_activate_base: false\n"

    bad = run_gpu_tui(tmp_path, [sshd_instance], "conda", sshd_instance.name, "mirror", "douban")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


class _Mirror(BaseHTTPRequestHandler):
    """Answers like a conda channel and a PEP 503 simple index (what conda and pip ask for)."""

    seen: list[str] = []

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
        self.seen.append(self.path)
        if self.path.endswith("/noarch/repodata.json"):
            self._ok("application/json", b'{"info": {"subdir": "noarch"}, "packages": {}}')
        elif self.path.endswith("/simple/pip/"):
            self._ok(
                "text/html", b'<!DOCTYPE html><html><body><a href="pip-24.0.tar.gz">pip-24.0.tar.gz</a></body></html>'
            )
        else:
            self.send_response(404)
            self.end_headers()

    def _ok(self, kind: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def mirror_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Mirror)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def indexes(tmp: Path, inst) -> tuple[dict, dict]:
    res = run_gpu_tui(tmp, [inst], "env", inst.name, "--json", timeout=120)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    return {i["tool"]: i for i in doc["indexes"]}, {c["name"]: c for c in doc["checks"]}


def test_a_symlinked_condarc_stays_a_link(sshd_instance, tmp_path: Path) -> None:
    """A dotfile manager's link (stow, chezmoi): the file it points to changes, the link stays."""
    home = sshd_instance.home()
    real = home / "dotfiles" / "condarc"
    real.parent.mkdir()
    real.write_text(OLD_CONDARC)
    (home / ".condarc").symlink_to(real)
    for mirror in ("tuna", "default"):
        res = run_gpu_tui(tmp_path, [sshd_instance], "conda", sshd_instance.name, "mirror", mirror, timeout=120)
        assert res.returncode == 0, res.stderr
        assert (home / ".condarc").is_symlink()
        if mirror == "tuna":
            assert "mirrors.tuna.tsinghua.edu.cn" in real.read_text()
    assert real.read_text() == OLD_CONDARC


def test_env_check_reports_the_index_and_how_fast(sshd_instance, mirror_server, tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{mirror_server.server_address[1]}"
    home = sshd_instance.home()
    (home / ".condarc").write_text(f"channels:\n  - defaults\ndefault_channels:\n  - {base}/anaconda/pkgs/main\n")
    (home / ".config" / "pip").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "pip" / "pip.conf").write_text(f"[global]\nindex-url = {base}/simple\n")

    found, checks = indexes(tmp_path, sshd_instance)
    assert found["conda"]["url"] == f"{base}/anaconda/pkgs/main/noarch/repodata.json"
    assert found["pip"]["url"] == f"{base}/simple/pip/"
    for tool in ("conda", "pip"):
        assert found[tool]["answers"] and found[tool]["status"] == 200 and isinstance(found[tool]["ms"], int)
        assert checks[f"{tool} index"]["ok"] and "answers in" in checks[f"{tool} index"]["detail"]
    assert "/anaconda/pkgs/main/noarch/repodata.json" in _Mirror.seen  # asked from the instance

    # a wrong path answers 404: reported as such, with the fix
    (home / ".config" / "pip" / "pip.conf").write_text(f"[global]\nindex-url = {base}/nothing-here\n")
    found, checks = indexes(tmp_path, sshd_instance)
    assert found["pip"]["status"] == 404 and not found["pip"]["answers"]
    assert "HTTP 404" in checks["pip index"]["detail"] and "mirror tuna" in checks["pip index"]["fix"]

    # the mirror gone: no answer, in the time given
    port = mirror_server.server_address[1]
    mirror_server.shutdown()
    mirror_server.server_close()
    (home / ".config" / "pip" / "pip.conf").write_text(f"[global]\nindex-url = http://127.0.0.1:{port}/simple\n")
    found, checks = indexes(tmp_path, sshd_instance)
    assert found["pip"]["status"] is None and found["pip"]["error"]
    assert not checks["pip index"]["ok"] and "does not answer" in checks["pip index"]["detail"]
