"""The headless layers never import Textual: checked in a fresh interpreter, plus import-linter."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_headless_imports_do_not_load_textual() -> None:
    code = (
        "import sys, gpu_tui.cli, gpu_tui.commands.status_cmd, gpu_tui.services.monitor.host, gpu_tui.services.status;"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('textual','rich')];"
        "print(','.join(bad))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert res.stdout.strip() == ""


def test_import_linter_contracts_hold() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "import-linter is part of the test extras"
    res = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
