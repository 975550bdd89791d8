#!/usr/bin/env python3
"""The floor: the least a dashboard of N instances x 8 GPUs at 1 Hz can cost, measured beside
gpu-tui by bench_dashboard_sshd.py (not a benchmark by itself, a client it runs).

One asyncssh connection per instance and on it one `nvidia-smi --query-gpu=<gpu-tui's fields>
--format=csv,noheader,nounits -lms 1000` channel; each line split on ", "; a plain Textual
screen repainted at 2 Hz: a `k/N online` line, 8 Sparklines (instance 0's GPUs' utilisation,
the last 60 samples) and one text row per instance (name, online, GPUs, mean utilisation,
power, memory). No stats loop, no job watching, no caches, no history beyond those 60 samples,
no reconnect logic beyond "try again in 2 s": what is left is the SSH transport, the line
splitting and Textual's repaint, which any dashboard of this fleet pays.

    python benchmarks/floor_client.py FLEET.json

FLEET.json: {"known_hosts": PATH, "instances": [{"name", "host", "port", "user", "key"}, ...]}.
Reconnects are counted on screen (`reconnects N`), and in the sshd logs by the benchmark.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import deque
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import asyncssh  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.widgets import Sparkline, Static  # noqa: E402

from gpu_tui.core.metrics.nvsmi import QUERY_FIELDS  # noqa: E402
from gpu_tui.remote.ssh import CIPHERS  # noqa: E402

COMMAND = f"nvidia-smi --query-gpu={','.join(QUERY_FIELDS)} --format=csv,noheader,nounits -lms 1000"
GPUS = 8
HISTORY = 60
_UTIL, _MEM, _POWER = (
    QUERY_FIELDS.index("utilization.gpu"),
    QUERY_FIELDS.index("memory.used"),
    QUERY_FIELDS.index("power.draw"),
)


class Inst:
    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.name: str = spec["name"]
        self.rows: dict[str, list[str]] = {}
        self.online = False
        self.reconnects = 0
        self.samples = 0
        self.history: list[deque[float]] = [deque(maxlen=HISTORY) for _ in range(GPUS)]


def _num(token: str) -> float:
    try:
        return float(token)
    except ValueError:
        return 0.0


class Floor(App[None]):
    CSS = "Sparkline { height: 1; } #head { height: 1; }"

    def __init__(self, fleet: dict) -> None:
        super().__init__()
        self.known_hosts = fleet["known_hosts"]
        self.insts = [Inst(s) for s in fleet["instances"]]

    def compose(self) -> ComposeResult:
        yield Static("", id="head")
        for g in range(GPUS):
            yield Sparkline([], id=f"spark{g}")
        yield Static("", id="rows")

    def on_mount(self) -> None:
        self.head = self.query_one("#head", Static)
        self.sparks = [self.query_one(f"#spark{g}", Sparkline) for g in range(GPUS)]
        self.table = self.query_one("#rows", Static)
        self.painted = -1  # instance 0's sample count at the last Sparkline update
        for inst in self.insts:
            self.run_worker(self.stream(inst), exclusive=False)
        self.set_interval(0.5, self.repaint)

    async def stream(self, inst: Inst) -> None:
        s = inst.spec
        first = True
        while True:
            if not first:
                inst.reconnects += 1
                await asyncio.sleep(2.0)
            first = False
            try:
                async with asyncssh.connect(
                    s["host"],
                    s["port"],
                    username=s["user"],
                    client_keys=[s["key"]],
                    known_hosts=self.known_hosts,
                    agent_path=None,
                    keepalive_interval=5,
                    keepalive_count_max=2,
                    # the cipher gpu-tui prefers (remote/ssh.py CIPHERS): the floor pays the
                    # transport at its cheapest, not asyncssh's default chacha20 in Python
                    encryption_algs=CIPHERS,
                ) as conn:
                    proc = await conn.create_process(COMMAND)
                    # a tick's rows arrive in one packet: read what is there, then split it into
                    # lines (an `async for line` would be an await per GPU row)
                    tail = ""
                    while chunk := await proc.stdout.read(65536):
                        *lines, tail = (tail + chunk).split("\n")
                        for line in lines:
                            self.take(inst, line)
            except (OSError, asyncssh.Error):
                pass
            inst.online = False

    def take(self, inst: Inst, line: str) -> None:
        fields = line.split(", ")
        if len(fields) != len(QUERY_FIELDS):
            return
        inst.rows[fields[0]] = fields
        inst.online = True
        if inst is self.insts[0] and fields[0].isdigit() and int(fields[0]) < GPUS:
            inst.history[int(fields[0])].append(_num(fields[_UTIL]))
            inst.samples += 1

    def repaint(self) -> None:
        online = sum(1 for i in self.insts if i.online)
        reconnects = sum(i.reconnects for i in self.insts)
        self.head.update(f"floor  {online}/{len(self.insts)} online  reconnects {reconnects}")
        if self.insts[0].samples != self.painted:  # only what changed, as any sane client does
            self.painted = self.insts[0].samples
            for spark, hist in zip(self.sparks, self.insts[0].history, strict=True):
                spark.data = list(hist)
        lines = []
        for inst in self.insts:
            rows = list(inst.rows.values())
            util = sum(_num(r[_UTIL]) for r in rows) / len(rows) if rows else 0.0
            power = sum(_num(r[_POWER]) for r in rows)
            mem = sum(_num(r[_MEM]) for r in rows) / 1024
            state = "online" if inst.online else "offline"
            lines.append(f"{inst.name:<12} {state:<8} {len(rows):>2} {util:>4.0f}%  {power:>7.0f} W  {mem:>7.1f} GiB")
        self.table.update("\n".join(lines))


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 0 if len(argv) == 2 else 2
    Floor(json.loads(Path(argv[1]).read_text())).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
