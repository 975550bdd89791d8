"""The demo's conda: sim/conda.py (the sshd tier's conda, one simulator) run in-process against
a miniconda install on disk, one per instance (`CondaBox`), in the demo's work dir.

The instance's `/` is a folder there (`fs`): `/root/miniconda3` is `fs/root/miniconda3`, laid out
like the sshd tier's install (an env is a dir with `conda-meta/history`), `~/.bashrc` is
`fs/root/.bashrc` (with conda's block: `conda init` finds it there). Paths in the output are
shown as the instance's. Envs when the fleet starts: `START_ENVS`.

An operation (`conda create`, `install`, `remove`, `env remove`, `init`, `python -m pip
install`) is a simulated process (`Op`): sim/conda.py's command in a worker thread, with this
module's output layer: each line comes a moment after the one before, and the transaction's
"Downloading and Extracting" wait lasts a share of `conda_seconds` (a create takes about that
long). A `kill` of its pid or group cancels it: it stops at its next line or in that wait, before
the env changes on disk (conda applies the transaction at the end too), and prints what conda
or pip print on that signal (exit 128 + the signal). Closing the channel does not stop it.
Anything else conda is asked (`env list`, `--version`) is answered at once, in the caller's
thread. pip is demo/condapip.py's.
"""

from __future__ import annotations

import os
import posixpath
import threading
import zlib
from collections.abc import Callable
from pathlib import Path

from gpu_tui.demo.program import Program
from gpu_tui.demo.sim import conda as simconda
from gpu_tui.demo.sim import condastate as st
from gpu_tui.demo.sim import condatext as ct

__all__ = ["CondaBox", "Op", "CONDA_ROOT", "CONDA_EXE", "CONDA_SECONDS", "START_ENVS"]

CONDA_ROOT = "/root/miniconda3"
CONDA_EXE = CONDA_ROOT + "/bin/conda"
HOME = "/root"
CONDA_SECONDS = 6.0
"""How long (real seconds) a `conda create` takes in the demo; the other operations scale from it."""
OP_TICK = 0.1
"""How often a running operation's stream is checked for new output (and for its end)."""
LINE_SHARE = 0.01
"""The pause before each line an operation prints, as a share of `conda_seconds`."""
WAIT_SHARE = {"create": 0.5, "install": 0.45}
"""The transaction's wait, as a share of `conda_seconds` (0.3 for the others)."""
PIP_TAILS = {2: "ERROR: Operation cancelled by user\n"}
START_ENVS = (
    # base has torch too: the demo's env check finds it in conda base, as on AutoDL's images
    ("base", ["python=3.12", "conda", "requests", "tqdm", "pytorch"]),
    (
        "llm",
        [
            "python=3.11",
            "pytorch",
            "pytorch-cuda=12.1",
            "torchvision",
            "transformers",
            "accelerate",
            "datasets",
            "einops",
        ],
    ),
    ("py311", ["python=3.11", "ipykernel"]),
)
"""The envs when the fleet starts: name, the specs they were created with."""
_OPS = ("create", "install", "remove", "init")
_MAX_OPS = 200  # ended operations kept for `kill -0` (the oldest are forgotten)


class _InstanceIo(st.Io):
    """sim/conda.py's output layer as a demo instance's shell gives it: no terminal to prompt on,
    HOME inside the instance's folder."""

    def __init__(self, box: CondaBox) -> None:
        super().__init__()
        self.box = box

    def flush(self) -> None:
        pass

    def readline(self) -> str:
        return ""  # a prompt takes its default, as conda does on EOF

    def home(self) -> str:
        return self.box.host(HOME)


class Op(_InstanceIo):
    """One simulated conda or pip process: a command in a worker thread; what it prints is
    taken by the stream (`take`); `kill` cancels it."""

    def __init__(self, box: CondaBox, pid: int, *, gap: float, wait: float, tails: dict[int, str]) -> None:
        super().__init__(box)
        self.pid, self.gap, self.wait, self.tails = pid, gap, wait, tails
        self.status: int | None = None
        self._out: list[str] = []
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._signal = 0

    # the output layer sim/conda.py writes through
    def write(self, text: str) -> None:
        for line in text.splitlines(keepends=True):
            self._sleep(self.gap)
            with self._lock:
                self._out.append(self.box.shown(line))

    error = write

    def pause(self) -> None:
        self._sleep(self.wait)

    def _sleep(self, seconds: float) -> None:
        if self._cancel.wait(seconds) if seconds > 0 else self._cancel.is_set():
            raise st.Cancelled

    # the process
    @property
    def running(self) -> bool:
        return self.status is None

    def start(self, body: Callable[[Op], int]) -> Op:
        def run() -> None:
            st.set_io(self)
            try:
                status = body(self)
            except st.Cancelled:
                status = 128 + self._signal
                with self._lock:
                    self._out.append(self.tails.get(self._signal, ""))
            except Exception as exc:  # a bug here: end the process, as a crashed conda would
                status = 1
                with self._lock:
                    self._out.append(f"conda (gpu-tui demo): {exc!r}\n")
            self.status = status

        threading.Thread(target=run, name=f"demo-conda-{self.pid}", daemon=True).start()
        return self

    def kill(self, signal: int) -> None:
        if signal and self.running:
            self._signal = signal
            self._cancel.set()

    def take(self) -> str:
        with self._lock:
            text, self._out = "".join(self._out), []
        return text

    def stream(self, head: str) -> Program:
        def done() -> int | None:
            with self._lock:
                return self.status if not self._out else None

        return Program(stdout=head, interval=OP_TICK, tick=lambda _i: self.take(), exit_when=done)


class CondaBox:
    """One instance's filesystem (`fs`, the instance's `/`) and its conda: the install on disk,
    the running operations, and the answers about them."""

    def __init__(self, fs: Path, *, new_pid: Callable[[], int], seed_key: str, seconds: float = CONDA_SECONDS) -> None:
        self.fs = str(fs)
        self.new_pid = new_pid
        self.seed_key = seed_key
        self.seconds = max(0.1, float(seconds))
        self.ops: dict[int, Op] = {}
        self._seed()

    # ------------------------------------------------------------------ paths

    def host(self, path: str) -> str:
        """Where the instance's absolute `path` lies here."""
        return self.fs + posixpath.normpath(path)

    def shown(self, text: str) -> str:
        """`text` with this machine's paths as the instance's."""
        return text.replace(self.fs, "")

    def _seed(self) -> None:
        root = self.host(CONDA_ROOT)
        os.makedirs(self.host(HOME), exist_ok=True)
        st.set_io(st.Io(root))
        try:
            with open(self.host(HOME + "/.bashrc"), "w", encoding="utf-8") as f:
                f.write("# ~/.bashrc\n\n" + simconda.init_block())  # `conda init bash` was run
            for name, specs in START_ENVS:
                prefix = root if name == "base" else f"{root}/envs/{name}"
                st.make_prefix(prefix, specs, argv=["create", "-n", name, "-y", *specs], conda_exe=CONDA_EXE)
            os.makedirs(root + "/bin", exist_ok=True)
            Path(root + "/bin/conda").touch()
        finally:
            st.set_io(None)

    # ------------------------------------------------------------------ reading

    def env_at(self, prefix: str) -> str | None:
        """The host path of the env at the instance's `prefix`; None if there is none."""
        path = self.host(prefix)
        return path if prefix.startswith("/") and st.is_env(path) else None

    def packages(self, prefix: str) -> dict[str, str]:
        """The env's packages (conda's and pip's), name -> version; empty if there is no env."""
        from gpu_tui.demo import condapip

        path = self.env_at(prefix)
        return condapip.installed(path) if path else {}

    def python_of(self, prefix: str) -> str | None:
        return self.packages(prefix).get("python")

    def env_of_python(self, path: str) -> str | None:
        """The prefix of the env whose python `path` is (`PREFIX/bin/python`, `python3`, `python3.11`)."""
        d, name = posixpath.split(posixpath.normpath(path))
        prefix = posixpath.dirname(d)
        ok = name.startswith("python") and posixpath.basename(d) == "bin"
        return prefix if ok and self.python_of(prefix) else None

    def prefixes(self) -> list[str]:
        st.set_io(st.Io(self.host(CONDA_ROOT)))
        try:
            return [self.shown(p) for p in st.all_prefixes()]
        finally:
            st.set_io(None)

    def du_kib(self, prefix: str, *, exclude_envs: bool) -> int | None:
        """`du -sk`: the env's packages' sizes; base with the other envs and the cache unless excluded."""
        from gpu_tui.demo import condapip

        pkgs = self.packages(prefix)
        if not pkgs:
            return None
        jitter = 0.985 + 0.03 * (zlib.crc32(f"{self.seed_key}:{prefix}".encode()) / 2**32)
        kib = int(condapip.size_mib(pkgs) * 1024 * jitter)
        if posixpath.normpath(prefix) != CONDA_ROOT or exclude_envs:
            return kib
        others = [p for p in self.prefixes() if p != CONDA_ROOT]
        return kib + condapip.PKGS_CACHE_MIB * 1024 + sum(self.du_kib(p, exclude_envs=True) or 0 for p in others)

    # ------------------------------------------------------------------ processes

    def signal(self, pid: int, signal: int) -> bool:
        """`kill -SIG pid` (or its group): True if there was such a process."""
        op = self.ops.get(pid)
        if op is None or not op.running:
            return False
        op.kill(signal)
        return True

    def run(self, argv: list[str], pid: int) -> tuple[Op | None, Program | None]:
        """Start the operation `argv` asks for; or an immediate answer; (None, None): not ours."""
        from gpu_tui.demo import condapip

        if argv[0] == CONDA_EXE:
            args = [self.host(a) if a.startswith("/") else a for a in argv[1:]]
            verb = "remove" if args[:2] == ["env", "remove"] else next((a for a in args if a[:1] != "-"), "")
            if verb not in _OPS:
                return None, self._now(args)
            wait = self.seconds * WAIT_SHARE.get(verb, 0.3)
            op = self._op(pid, wait, ct.SIGNAL_TAILS)
            return op.start(lambda io: simconda.main(args, self.host(CONDA_ROOT), None, io)), None
        if len(argv) >= 4 and argv[1:4] == ["-m", "pip", "install"]:
            prefix = self.env_of_python(argv[0])
            if prefix is None:
                return None, None
            op = self._op(pid, self.seconds * 0.5, PIP_TAILS)
            return op.start(lambda io: condapip.install(io, self.host(prefix), argv[4:])), None
        return None, None

    def _op(self, pid: int, wait: float, tails: dict[int, str]) -> Op:
        if len(self.ops) >= _MAX_OPS:
            for old in [p for p, o in self.ops.items() if not o.running][: len(self.ops) // 2]:
                del self.ops[old]
        op = self.ops[pid] = Op(self, pid, gap=self.seconds * LINE_SHARE, wait=wait, tails=tails)
        return op

    def _now(self, args: list[str]) -> Program:
        """A command that changes nothing, answered at once (stdout and stderr apart)."""
        cap = _Capture(self)
        try:
            status = simconda.main(args, self.host(CONDA_ROOT), None, cap)
        finally:
            st.set_io(None)
        return Program(stdout="".join(cap.out), stderr="".join(cap.err), status=status)


class _Capture(_InstanceIo):
    """A command answered at once: what it prints, stdout and stderr apart."""

    def __init__(self, box: CondaBox) -> None:
        super().__init__(box)
        self.out, self.err = list[str](), list[str]()

    def write(self, text: str) -> None:
        self.out.append(self.box.shown(text))

    def error(self, text: str) -> None:
        self.err.append(self.box.shown(text))
