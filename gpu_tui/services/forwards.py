"""`Forwards`: the ports forwarded from instances to this machine, for the CLI and the dashboard.

Each forward rides on its instance's one SSH connection (the `SshHost` the monitors or the CLI
keep connected): a connection accepted here opens a channel on the host's connection of the
moment, so forwards come back by themselves after a reconnect, and fail fast while offline.
A failure is reported once per forward until a connection goes through again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from gpu_tui.core.bilingual import say
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.forwardspec import DEFAULT_BIND, ForwardSpec, local_url, preset_for
from gpu_tui.core.i18n import N_
from gpu_tui.remote.forwarding import LocalForward, probe
from gpu_tui.remote.host import Host
from gpu_tui.remote.ssh import SshHost

__all__ = ["Forward", "ForwardEvent", "Forwards"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ForwardEvent:
    """Something changed for instance `name`'s forward of `remote` (kind: opened, closed,
    failed, recovered); `message` says what, for failed."""

    name: str
    remote: int
    kind: str
    message: str | None = None


@dataclass(slots=True)
class Forward:
    name: str
    remote: int
    bind: str
    local: int
    listener: LocalForward = field(repr=False)
    problem: str | None = None
    """The last failure's line (`title: message`), until a connection goes through again."""

    @property
    def url(self) -> str:
        return local_url(self.bind, self.local)

    @property
    def label(self) -> str | None:
        """The preset's name for the port (English, marked), if it is one."""
        preset = preset_for(self.remote)
        return preset.label if preset else None

    @property
    def connections(self) -> int:
        return len(self.listener.tunnels)


class Forwards:
    """Owns the listeners; `on_change` is called on the event loop for every ForwardEvent."""

    def __init__(self, on_change: Callable[[ForwardEvent], None] | None = None) -> None:
        self._forwards: dict[tuple[str, int], Forward] = {}
        self._opening: set[tuple[str, int]] = set()
        """Forwards between the check and their listener: a second open of one is refused."""
        self._on_change = on_change

    def of(self, name: str) -> list[Forward]:
        """Instance `name`'s forwards, by instance port."""
        return sorted((f for f in self._forwards.values() if f.name == name), key=lambda f: f.remote)

    def count(self, name: str) -> int:
        return sum(1 for f in self._forwards.values() if f.name == name)

    def _emit(self, event: ForwardEvent) -> None:
        if self._on_change is not None:
            self._on_change(event)

    async def open(
        self, name: str, host: Host, spec: ForwardSpec, bind: str = DEFAULT_BIND, *, check: bool = True
    ) -> Forward:
        """Forward `spec` of instance `name`. With `check`, first make sure something listens
        on the instance's port (NothingListening otherwise). PortInUse when the local port is
        taken; ConnectionLost when the host is not connected."""
        key = (name, spec.remote)
        if key in self._forwards:
            raise InputError(
                say(
                    N_("{name}: port {port} is already forwarded, at {url}"),
                    name=name,
                    port=spec.remote,
                    url=self._forwards[key].url,
                )
            )
        if key in self._opening:  # a second Enter while the first one still probes the port
            raise InputError(say(N_("{name}: port {port} is being forwarded already"), name=name, port=spec.remote))
        if not isinstance(host, SshHost):
            raise RemoteError(say(N_("{name}: ports can be forwarded only over SSH"), name=name))
        self._opening.add(key)
        try:
            if check:
                await probe(host.connection(), name, spec.remote)
            holder: list[Forward] = []
            listener = LocalForward(
                host.connection,
                name,
                spec.remote,
                on_failure=lambda exc: self._failed(holder[0], exc),
                on_success=lambda: self._recovered(holder[0]),
            )
            local = await listener.listen(bind, spec.local)
        finally:
            self._opening.discard(key)
        fwd = Forward(name, spec.remote, bind, local, listener)
        holder.append(fwd)
        self._forwards[key] = fwd
        log.info("%s: forwarding port %s to %s", name, spec.remote, fwd.url)
        self._emit(ForwardEvent(name, spec.remote, "opened"))
        return fwd

    def _failed(self, fwd: Forward, exc: RemoteError) -> None:
        line = exc.line()
        if fwd.problem == line or self._forwards.get((fwd.name, fwd.remote)) is not fwd:
            return
        fwd.problem = line
        log.info("%s: forward of port %s: %s", fwd.name, fwd.remote, exc.english)
        self._emit(ForwardEvent(fwd.name, fwd.remote, "failed", line))

    def _recovered(self, fwd: Forward) -> None:
        if fwd.problem is not None:
            fwd.problem = None
            self._emit(ForwardEvent(fwd.name, fwd.remote, "recovered"))

    def close(self, name: str, remote: int) -> bool:
        """Stop forwarding that port (its connections end); False if it was not forwarded."""
        fwd = self._forwards.pop((name, remote), None)
        if fwd is None:
            return False
        fwd.listener.close()
        log.info("%s: forward of port %s closed", name, remote)
        self._emit(ForwardEvent(name, remote, "closed"))
        return True

    def rehost(self, name: str, host: Host) -> None:
        """Instance `name` is reached through `host` from now on (edited, or started elsewhere):
        its listeners stay, and their next connections open channels there."""
        for fwd in self.of(name):
            if isinstance(host, SshHost):
                fwd.listener.opener = host.connection
            else:
                self.close(name, fwd.remote)

    def close_instance(self, name: str) -> None:
        for fwd in self.of(name):
            self.close(name, fwd.remote)

    def close_all(self) -> None:
        for name, remote in list(self._forwards):
            self.close(name, remote)
