"""A real Prometheus on loopback scraping stand-ins for NVIDIA's dcgm-exporter (issue 26).

`DcgmExporter(node, gpus)` serves one node's series in the exposition format dcgm-exporter writes
(its default counters' names and labels: gpu, UUID, device, modelName, Hostname,
DCGM_FI_DRIVER_VERSION), from values a test sets. `Prometheus(targets)` is Debian's
`prometheus` binary with its own config and TSDB in a temporary directory, scraping every
second. Without the binary the tests skip, saying how to get it; in CI (GPU_TUI_REQUIRE_PROMETHEUS=1,
set by .ci/run, which installs it) a missing binary fails them instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from loophttp import LoopbackServer
from sshd import free_port

__all__ = ["DcgmExporter", "NodeExporter", "Prometheus", "free_port", "require_prometheus"]

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
_HELP = {
    "DCGM_FI_DEV_GPU_UTIL": "GPU utilization (in %).",
    "DCGM_FI_DEV_FB_USED": "Framebuffer memory used (in MiB).",
    "DCGM_FI_DEV_FB_FREE": "Framebuffer memory free (in MiB).",
    "DCGM_FI_DEV_POWER_USAGE": "Power draw (in W).",
    "DCGM_FI_DEV_GPU_TEMP": "GPU temperature (in C).",
    "DCGM_FI_DEV_XID_ERRORS": "Value of the last XID error encountered.",
}


def require_prometheus() -> str:
    if os.access(PROMETHEUS, os.X_OK):
        return PROMETHEUS
    why = "no prometheus binary (apt-get install prometheus; .ci/run installs it)"
    if os.environ.get("GPU_TUI_REQUIRE_PROMETHEUS") == "1":
        pytest.fail(why)
    pytest.skip(why)


class DcgmExporter:
    """One node's dcgm-exporter: `values[gpu][metric]` is what the next scrape reads."""

    def __init__(self, node: str, gpus: int, model: str = "NVIDIA A100-SXM4-80GB") -> None:
        self.node, self.model = node, model
        self.values: list[dict[str, float | str]] = [
            {
                "DCGM_FI_DEV_GPU_UTIL": 10.0 * i,
                "DCGM_FI_DEV_FB_USED": 1024.0 * (i + 1),
                "DCGM_FI_DEV_FB_FREE": 81920.0 - 1024.0 * (i + 1),
                "DCGM_FI_DEV_POWER_USAGE": 100.5 + i,
                "DCGM_FI_DEV_GPU_TEMP": 40.0 + i,
                "DCGM_FI_DEV_XID_ERRORS": 0.0,
            }
            for i in range(gpus)
        ]
        self.pods: dict[int, tuple[str, str]] = {}
        """{GPU index: (namespace, pod)} as dcgm-exporter labels a GPU allotted to a Kubernetes pod."""
        self.scrapes = 0
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                body = exporter.text().encode()
                exporter.scrapes += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.port = free_port()
        self._server = LoopbackServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def text(self) -> str:
        lines = []
        for metric, help_text in _HELP.items():
            lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge"]
            for i, gpu in enumerate(self.values):
                labels = (
                    f'gpu="{i}",UUID="GPU-{self.node}-{i:04d}",device="nvidia{i}",modelName="{self.model}",'
                    f'Hostname="{self.node}",DCGM_FI_DRIVER_VERSION="550.54.15"'
                )
                if i in self.pods:
                    labels += f',namespace="{self.pods[i][0]}",pod="{self.pods[i][1]}",container="main"'
                lines.append(f"{metric}{{{labels}}} {gpu[metric]}")
        return "\n".join(lines) + "\n"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class NodeExporter(DcgmExporter):
    """One node's node_exporter: the series gpu-tui reads, in node_exporter's names and labels
    (`node_uname_info`'s nodename, `node_cpu_seconds_total` per cpu and mode)."""

    def __init__(self, nodename: str, cpus: int = 4) -> None:
        self.cpus, self.load1, self.mem_total, self.mem_available = cpus, 2.5, 64 * 2**30, 48 * 2**30
        self.boot = time.time() - 3 * 86400
        self.started = time.monotonic()
        super().__init__(nodename, 0)

    def text(self) -> str:
        busy = time.monotonic() - self.started  # a quarter of every CPU busy
        lines = [
            "# TYPE node_load1 gauge",
            f"node_load1 {self.load1}",
            "# TYPE node_memory_MemTotal_bytes gauge",
            f"node_memory_MemTotal_bytes {self.mem_total:.7e}",
            "# TYPE node_memory_MemAvailable_bytes gauge",
            f"node_memory_MemAvailable_bytes {self.mem_available:.7e}",
            "# TYPE node_boot_time_seconds gauge",
            f"node_boot_time_seconds {self.boot:.0f}",
            "# TYPE node_uname_info gauge",
            f'node_uname_info{{domainname="(none)",machine="x86_64",nodename="{self.node}",release="6.1.0-27-amd64",'
            f'sysname="Linux",version="#1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01)"}} 1',
            "# TYPE node_cpu_seconds_total counter",
        ]
        for cpu in range(self.cpus):
            lines.append(f'node_cpu_seconds_total{{cpu="{cpu}",mode="idle"}} {1000 + busy * 0.75:.3f}')
            lines.append(f'node_cpu_seconds_total{{cpu="{cpu}",mode="user"}} {500 + busy * 0.25:.3f}')
        return "\n".join(lines) + "\n"


class Prometheus:
    """Debian's prometheus on 127.0.0.1, scraping `targets` every second (job `dcgm`; or every
    `scrape_seconds`), and `node_targets` (job `node`), as a lab scrapes node_exporter apart
    from dcgm-exporter."""

    def __init__(
        self,
        root: Path,
        targets: list[str],
        *,
        labels: dict[str, str] | None = None,
        node_targets: list[str] | None = None,
        scrape_seconds: int = 1,
    ) -> None:
        """`scrape_seconds`: 1 in tests; a lab's own 15 in benchmarks."""
        self.binary = require_prometheus()
        self.root = root
        self.port = free_port()
        root.mkdir(parents=True, exist_ok=True)
        static = {"targets": targets, **({"labels": labels} if labels else {})}
        config = {
            "global": {
                "scrape_interval": f"{scrape_seconds}s",
                "evaluation_interval": f"{scrape_seconds}s",
                "scrape_timeout": f"{900 * scrape_seconds if scrape_seconds < 10 else 10_000}ms",
            },
            "scrape_configs": [{"job_name": "dcgm", "static_configs": [static]}]
            + (
                [
                    {
                        "job_name": "node",
                        "static_configs": [{"targets": node_targets, **({"labels": labels} if labels else {})}],
                    }
                ]
                if node_targets
                else []
            ),
        }
        (root / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        self._log = open(root / "prometheus.log", "wb")  # noqa: SIM115 (closed in stop)
        self._proc = subprocess.Popen(
            [
                self.binary,
                f"--config.file={root / 'prometheus.yml'}",
                f"--storage.tsdb.path={root / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def query(self, expr: str) -> list[dict[str, object]]:
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 (loopback)
            return json.loads(resp.read())["data"]["result"]

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"prometheus exited: {(self.root / 'prometheus.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:  # noqa: S310
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise TimeoutError("prometheus did not become ready")

    def stop(self) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._log.close()
