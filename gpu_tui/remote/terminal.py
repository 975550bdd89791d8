"""The local end of an interactive remote session: raw mode, window size and the byte pumps.

POSIX only in full. Windows has no termios and no SIGWINCH: there the local console stays in
line mode (it echoes and edits a line, and sends it on Enter), the remote pty is asked not to
echo (`term_modes()`), and a window resize is not passed on. The imports are guarded so that
this module (and `gpu-tui ssh`) still imports there.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import asyncssh

from gpu_tui.core.bilingual import say
from gpu_tui.core.errors import ConnectionLost
from gpu_tui.core.i18n import N_

try:  # POSIX
    import termios
    import tty
except ImportError:  # Windows: line mode, no resize (see the module docstring)
    termios = None  # type: ignore[assignment]
    tty = None  # type: ignore[assignment]

__all__ = ["HAS_TERMIOS", "terminal_size", "raw_mode", "term_modes", "pump"]

HAS_TERMIOS = termios is not None
CHUNK = 65536
EXIT_STATUS_WAIT = 5.0
"""After the output ended, how long to wait for the exit status."""
DEFAULT_SIZE = (80, 24)


def terminal_size(*fds: int) -> tuple[int, int]:
    """(columns, rows) of the first of `fds` that is a terminal; 80x24 when none is."""
    for fd in fds:
        with contextlib.suppress(OSError, ValueError):
            size = os.get_terminal_size(fd)
            if size.columns > 0 and size.lines > 0:
                return size.columns, size.lines
    return DEFAULT_SIZE


@contextlib.contextmanager
def raw_mode(fd: int) -> Iterator[bool]:
    """Put the terminal on `fd` in raw mode (every key goes to the remote side, ^C included) and
    restore it however the block ends. Yields False, changing nothing, where there is no terminal
    or no termios."""
    if termios is None or not os.isatty(fd):
        yield False
        return
    saved = termios.tcgetattr(fd)
    try:
        # TCSADRAIN, not setraw's default TCSAFLUSH: keys typed ahead still reach the shell
        tty.setraw(fd, termios.TCSADRAIN)
        yield True
    finally:
        with contextlib.suppress(termios.error, OSError):  # the terminal may be gone (hang-up)
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def term_modes() -> dict[int, int] | None:
    """Pty modes to request: None (the server's defaults) where the local terminal goes raw; on
    Windows, echo off, because the console already echoes in line mode."""
    return None if HAS_TERMIOS else {asyncssh.PTY_ECHO: 0}


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


async def _read_fd(fd: int, loop: asyncio.AbstractEventLoop) -> bytes:
    """One chunk from `fd` once it is readable (b"" at EOF, or when the terminal is gone)."""
    done: asyncio.Future[bytes] = loop.create_future()

    def ready() -> None:
        loop.remove_reader(fd)
        if not done.done():
            try:
                done.set_result(os.read(fd, CHUNK))
            except BlockingIOError:
                loop.add_reader(fd, ready)
            except OSError:  # EIO: the terminal hung up
                done.set_result(b"")

    loop.add_reader(fd, ready)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


def _thread_reader(fd: int, loop: asyncio.AbstractEventLoop) -> asyncio.Queue[bytes]:
    """For what the event loop cannot watch (a regular file, /dev/null, Windows): a daemon thread
    reads, a small queue gives back-pressure. A daemon thread, not the executor, so that a read
    still blocked when the session ends cannot hold up the exit."""
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=4)

    def run() -> None:
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                data = b""
            try:
                asyncio.run_coroutine_threadsafe(queue.put(data), loop).result()
            except (RuntimeError, asyncio.CancelledError, Exception):  # the loop is gone
                return
            if not data:
                return

    threading.Thread(target=run, name="gpu-tui-stdin", daemon=True).start()
    return queue


async def _feed(process: asyncssh.SSHClientProcess[bytes], fd: int | None) -> None:
    """Local `fd` -> the remote stdin until EOF; None: the remote stdin is empty (EOF at once)."""
    stdin = process.stdin
    with contextlib.suppress(asyncssh.Error, OSError):
        if fd is not None:
            loop = asyncio.get_running_loop()
            queue: asyncio.Queue[bytes] | None = None
            while True:
                if queue is None:
                    try:
                        data = await _read_fd(fd, loop)
                    except (OSError, ValueError, NotImplementedError):  # epoll refuses files
                        queue = _thread_reader(fd, loop)
                        continue
                else:
                    data = await queue.get()
                if not data:
                    break
                stdin.write(data)
                await stdin.drain()
        stdin.write_eof()


async def _drain(reader: asyncssh.SSHReader[bytes], fd: int, broken: list[bool]) -> None:
    while chunk := await reader.read(CHUNK):
        if broken:
            continue  # our end went away: keep reading so the remote side is not stalled
        try:
            _write_all(fd, chunk)
        except BrokenPipeError:
            broken.append(True)


def _exit_code(process: asyncssh.SSHClientProcess[bytes]) -> int | None:
    status = process.exit_status  # -1 when the remote side reported a signal instead
    if status is not None and status >= 0:
        return status
    sig = process.exit_signal
    if sig is not None:
        with contextlib.suppress(KeyError):
            return 128 + int(signal.Signals["SIG" + sig[0]])
        return 128 + 15
    return None


async def pump(
    process: asyncssh.SSHClientProcess[bytes],
    lost: Awaitable[object],
    *,
    name: str,
    stdin_fd: int | None,
    stdout_fd: int = 1,
    stderr_fd: int = 2,
    winch_fd: int | None = None,
) -> int | None:
    """Run a session to its end: `stdin_fd` -> remote stdin (None: send EOF at once), remote
    stdout/stderr -> `stdout_fd`/`stderr_fd` as bytes as they come, SIGWINCH -> the pty's new
    size (read from `winch_fd`). SIGTERM and SIGHUP end the session cleanly (the caller's raw
    mode is restored). Returns the remote exit code (128+N for a signal; 128+N too when we were
    told to stop by signal N), or None when the session ended without one; raises
    ConnectionLost when the link dropped first (`lost` resolved)."""
    loop = asyncio.get_running_loop()
    stopped_by: list[int] = []
    broken: list[bool] = []
    installed: list[int] = []

    def resized() -> None:
        assert winch_fd is not None
        with contextlib.suppress(asyncssh.Error, OSError):
            process.change_terminal_size(*terminal_size(winch_fd))

    def stop(signum: int) -> None:
        stopped_by.append(signum)
        process.close()

    handlers: list[tuple[int, Callable[[], object]]] = []
    if winch_fd is not None and hasattr(signal, "SIGWINCH"):
        handlers.append((signal.SIGWINCH, resized))
    for sig_name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, sig_name):
            signum = int(getattr(signal, sig_name))
            handlers.append((signum, functools.partial(stop, signum)))
    for signum, handler in handlers:
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):  # not main thread / Windows
            loop.add_signal_handler(signum, handler)
            installed.append(signum)

    output = asyncio.ensure_future(
        asyncio.gather(_drain(process.stdout, stdout_fd, broken), _drain(process.stderr, stderr_fd, broken))
    )
    feed = asyncio.ensure_future(_feed(process, stdin_fd))
    gone: asyncio.Future[Any] = asyncio.ensure_future(lost)  # its result is never read
    closed: asyncio.Future[None] | None = None
    try:
        await asyncio.wait({output, gone}, return_when=asyncio.FIRST_COMPLETED)
        if output.done() and output.exception() is None:
            # the exit status comes with or just after the end of the output
            closed = asyncio.ensure_future(process.wait_closed())
            await asyncio.wait({closed, gone}, timeout=EXIT_STATUS_WAIT, return_when=asyncio.FIRST_COMPLETED)
        if stopped_by:  # we closed the session: the remote's hang-up is not the news
            return 128 + stopped_by[0]
        code = _exit_code(process)
        if code is not None:
            return code
        if broken:
            return 128 + 13  # like a pipeline whose reader went away (SIGPIPE)
        if gone.done() or (output.done() and output.exception() is not None):
            raise ConnectionLost(say(N_("{name}: connection lost"), name=name))
        return None
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
        for task in (output, feed, gone, closed):
            if task is not None and not task.done():
                task.cancel()
        for task in (output, feed, gone, closed):
            if task is not None:
                with contextlib.suppress(BaseException):
                    await task
