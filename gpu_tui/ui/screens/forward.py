"""`f`: the selected instance's forwarded ports: add a preset or any PORT[:LOCAL], see each local
URL, close one.

The forwards belong to the dashboard's Forwards service (they outlive this screen and ride on
the dashboard's connection to the instance, reconnects included); this screen only adds,
lists and closes them. Enter on a preset forwards it (a taken local port falls back to a free
one), or closes it when it is live; Enter in the port field forwards what is typed; Delete
closes the forward under the cursor.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.forwardspec import DEFAULT_BIND, PRESETS, ForwardSpec, parse_spec
from gpu_tui.core.i18n import N_, _, ngettext
from gpu_tui.core.text import printable
from gpu_tui.remote.forwarding import PortInUse
from gpu_tui.remote.host import Host
from gpu_tui.services.forwards import Forward, Forwards
from gpu_tui.ui.screens.localise import pad, translate_bindings

__all__ = ["ForwardScreen"]

REFRESH_SECONDS = 1.0
"""How often the list is redrawn (connection counts, a failure reported by the service)."""


def forward_line(fwd: Forward) -> Text:
    """`6006  http://127.0.0.1:6006  TensorBoard  1 connection`, and the last problem below it."""
    t = Text()
    t.append(f"{fwd.remote:>5}  ", style="bold")
    t.append(fwd.url, style="cyan")
    if fwd.label:
        t.append(f"  {_(fwd.label)}")
    n = fwd.connections
    t.append("  " + ngettext("{n} connection", "{n} connections", n).format(n=n), style="dim")
    if fwd.problem:
        t.append("\n" + printable(fwd.problem), style="red")
    return t


class ForwardScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", N_("Back")),
        Binding("delete", "close_selected", N_("Close forward")),
        Binding("d", "close_selected", N_("Close forward"), show=False),
    ]
    DEFAULT_CSS = """
    ForwardScreen > VerticalScroll { padding: 0 1; }
    ForwardScreen #title { text-style: bold; margin-top: 1; }
    ForwardScreen .hint { color: $text-muted; }
    ForwardScreen .heading { text-style: bold; margin-top: 1; }
    ForwardScreen OptionList, ForwardScreen OptionList:focus { height: auto; max-height: 8; border: none;
        padding: 0; }
    ForwardScreen #row { height: 1; margin-top: 1; }
    ForwardScreen #row > Label { width: auto; margin-right: 1; }
    ForwardScreen Input, ForwardScreen Input:focus { border: none; height: 1; width: 1fr; padding: 0 1; }
    ForwardScreen Input:focus { background: $boost; }
    ForwardScreen #status { height: auto; margin-top: 1; }
    """

    def __init__(self, name: str, host: Host, forwards: Forwards, *, bind: str = DEFAULT_BIND) -> None:
        super().__init__()
        translate_bindings(self)
        self._instance, self._host, self._forwards, self._bind = name, host, forwards, bind
        self._shown: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(_("Forwarded ports of {name}").format(name=self._instance)), id="title")
            yield Static(
                _(
                    "A port on the instance, opened on this machine ({bind}) over gpu-tui's SSH "
                    "connection; it stays while the dashboard runs."
                ).format(bind=self._bind),
                classes="hint",
            )
            yield Static(_("Presets (Enter: forward, or close when live)"), classes="heading")
            yield OptionList(id="presets")
            with Horizontal(id="row"):
                yield Label(_("Port"))
                yield Input(placeholder=_("PORT or PORT:LOCAL, Enter"), id="spec")
            yield Static(_("Live forwards (Delete: close)"), classes="heading")
            yield OptionList(id="forwards")
            yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self._refresh()
        self.set_interval(REFRESH_SECONDS, self._refresh)
        self.query_one("#presets", OptionList).focus()

    # ----- drawing
    def _refresh(self) -> None:
        live = {f.remote: f for f in self._forwards.of(self._instance)}
        state = tuple((f.remote, f.local, f.connections, f.problem) for f in live.values())
        if state == self._shown and self.query_one("#presets", OptionList).option_count:
            return
        self._shown = state
        width = max(cell_len(_(p.label)) for p in PRESETS)
        presets = []
        for p in PRESETS:
            t = Text(pad(_(p.label), width) + f"  {p.port:>5}")
            fwd = live.get(p.port)
            if fwd is not None:
                t.append("  ⇄ ", style="bold green")
                t.append(fwd.url, style="cyan")
            presets.append(Option(t, id=str(p.port)))
        self._replace("#presets", presets)
        rows = [Option(forward_line(f), id=str(f.remote)) for f in live.values()]
        self._replace("#forwards", rows or [Option(Text(_("none yet"), style="dim"), id="none", disabled=True)])

    def _replace(self, selector: str, options: list[Option]) -> None:
        lst = self.query_one(selector, OptionList)
        keep = lst.highlighted
        lst.clear_options()
        lst.add_options(options)
        if options and not options[0].disabled:
            lst.highlighted = min(keep or 0, len(options) - 1)

    def _status(self, text: str, style: str = "") -> None:
        self.query_one("#status", Static).update(Text(printable(text), style=style))

    # ----- adding and closing
    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id
        if option_id is None or not option_id.isdigit():
            return
        port = int(option_id)
        if event.option_list.id == "forwards" or self._is_live(port):
            self._close(port)
        else:
            self._add(ForwardSpec(port, port), preset=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            spec = parse_spec(event.value)
        except ValueError as exc:
            self._status(str(exc), "red")
            return
        self._add(spec, preset=False)

    def action_close_selected(self) -> None:
        lst = self.query_one("#forwards", OptionList)
        if not lst.option_count:
            return
        option_id = lst.get_option_at_index(lst.highlighted or 0).id
        if option_id is not None and option_id.isdigit():
            self._close(int(option_id))

    def action_back(self) -> None:
        self.app.pop_screen()

    def _is_live(self, port: int) -> bool:
        return any(f.remote == port for f in self._forwards.of(self._instance))

    def _close(self, port: int) -> None:
        if self._forwards.close(self._instance, port):
            self._status(_("port {port}: forward closed").format(port=port))
        self._refresh()

    @work(group="forward", exit_on_error=False)
    async def _add(self, spec: ForwardSpec, *, preset: bool) -> None:
        self._status(_("port {port}: checking the instance…").format(port=spec.remote), "dim")
        try:
            try:
                fwd = await self._forwards.open(self._instance, self._host, spec, self._bind)
            except PortInUse:
                if not preset:
                    raise
                # the same port is often taken here (a local TensorBoard): any free one will do
                fwd = await self._forwards.open(self._instance, self._host, ForwardSpec(spec.remote, 0), self._bind)
        except GpuTuiError as exc:
            self._status(exc.line(), "red")
            return
        self.query_one("#spec", Input).value = ""
        self._status(_("port {port} is at {url}").format(port=fwd.remote, url=fwd.url), "green")
        self._refresh()
