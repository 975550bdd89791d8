"""ui/ paints; it does not bill. The dashboard tells services/billing.py what it saw (an instance
up, a power-on, a verified shutdown) and that decides what the cost ledger gets: no module under
gpu_tui/ui/ imports services/ledger.py or calls a Ledger write method."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from gpu_tui.services.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "gpu_tui" / "ui"
LEDGER_MODULE = "gpu_tui.services.ledger"
READS = {"intervals", "totals", "per_period", "daily", "daily_by_currency", "check"}
"""Ledger's methods that only read; every other public method writes (or flushes, which writes)."""
ONLY_LEDGER = {"observe", "observe_many", "close_db"}
"""Write methods no other object in ui/ has: a call of one is a ledger write whatever its receiver."""


def ledger_writes() -> set[str]:
    methods = {n for n, f in inspect.getmembers(Ledger, inspect.isfunction) if not n.startswith("_")}
    assert methods >= READS, f"a read was renamed: update READS ({READS - methods})"
    return methods - READS


def _names_in(node: ast.expr) -> list[str]:
    return [
        n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute)
    ]


def offences(source: str, where: str = "<source>") -> list[str]:
    """Each import of the ledger module and each call of a Ledger write method (one on a receiver
    that names a ledger, or one only a Ledger has) in `source`."""
    writes, found = ledger_writes(), []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == LEDGER_MODULE
            or isinstance(node, ast.Import)
            and any(a.name == LEDGER_MODULE for a in node.names)
        ):
            found.append(f"{where}:{node.lineno}: imports {LEDGER_MODULE}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in writes:
            receiver = _names_in(node.func.value)
            if node.func.attr in ONLY_LEDGER or any("ledger" in n.lower() for n in receiver):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node.func)}()")
    return found


def test_the_write_methods_are_the_ledgers() -> None:
    assert ledger_writes() >= {"observe", "observe_many", "close", "flush", "close_db"}


def test_the_check_finds_a_ledger_write() -> None:
    """The rule below can fail: each way ui/ used to bill is caught, what it does now is not."""
    billed = """
from gpu_tui.services.ledger import Ledger
opened.ledger.observe(name, up, cfg.hourly_rate, now, cfg.currency)
opened.ledger.close(r.name, time.time(), "shutdown")
self._ledger.flush()
held.observe_many(seen)
"""
    assert len(offences(billed)) == 5, offences(billed)
    told = """
from gpu_tui.services.billing import Billing
opened.billing.seen_up(cfg, up, now)
opened.billing.shut_down(r.name, time.time())
host.close()
sys.stdout.flush()
"""
    assert offences(told) == []


def test_no_ui_module_writes_the_ledger() -> None:
    found = [o for p in sorted(UI.rglob("*.py")) for o in offences(p.read_text(), str(p.relative_to(ROOT)))]
    assert not found, "ui/ tells services/billing.py what it saw; it does not write the ledger:\n" + "\n".join(found)
