"""`v`: the VRAM calculator. Model, precision, training, context and batch in; weights, KV cache,
activations, training state and the total out, as typed, with which of the fleet's GPUs and
which common rentable cards hold it (docs/FIT.md has the formulas)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Select, Static

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.fit.estimate import (
    COMMON_CARDS,
    DTYPES,
    GIB,
    TRAIN_MODES,
    Card,
    CardFit,
    Estimate,
    breakdown,
    cheapest_fit,
    estimate,
    fit_cards,
    instance_card,
)
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.text import printable
from gpu_tui.core.units import MISSING, format_bytes, format_rate_per_hour
from gpu_tui.services.fitinput import parse_positive, resolve_model
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.screens.form_css import fit_labels
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["FitScreen", "fit_result", "fleet_cards"]

TRAIN_LABELS = {"none": N_("inference"), "lora": N_("LoRA fine-tune"), "full": N_("full fine-tune")}


def fleet_cards(views: Iterable[InstanceView]) -> list[Card]:
    """One card per instance, from its last frame (memory 0 until a frame came)."""
    return [instance_card(v.config.name, v.config.hourly_rate, v.frame.gpus if v.frame else ()) for v in views]


def _gib(v: float | None) -> str:
    return MISSING if v is None else format_bytes(v * GIB)


def _verdict(f: CardFit, total: float) -> tuple[Text, Text]:
    """(fits?, headroom) cells: yes / no / unknown, and the spare or missing memory."""
    if f.fits is None:
        return Text("?", style="dim"), Text(_("not seen"), style="dim")
    spare = f.card.memory_gib - total
    if f.fits:
        return Text(_("yes"), style="green"), Text("+" + _gib(spare), style="green")
    return Text(_("no"), style="red"), Text("-" + _gib(-spare), style="red")


def fit_result(est: Estimate, fleet: list[Card], currency: str, width: int = 100) -> Table:
    """The breakdown beside the verdict, then one row per fleet instance and per common card."""
    parts = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1))
    parts.add_column(no_wrap=True)
    parts.add_column(justify="right", no_wrap=True)
    for label, value in breakdown(est):
        parts.add_row(_(label), Text(_gib(value), style="dim" if value is None else ""))
    parts.add_row(Text(_("total"), style="bold"), Text(_gib(est.total_gib), style="bold"))
    mine, common = fit_cards(est, fleet), fit_cards(est, COMMON_CARDS)
    head = Text(_("{params}B parameters").format(params=f"{est.params_billion:.2f}"), style="bold cyan")
    best = cheapest_fit(mine)
    if best is not None:
        head.append(
            "\n"
            + _("cheapest fitting card in your fleet: {name} ({rate})").format(
                name=printable(best.card.instance or ""), rate=format_rate_per_hour(best.card.rate, currency)
            ),
            style="green",
        )
    elif not mine:
        head.append("\n" + _("no instances in this fleet"), style="dim")
    elif any(f.fits is None for f in mine):
        head.append("\n" + _("no card seen so far holds it on one GPU"), style="yellow")
    else:
        head.append("\n" + _("no card in this fleet holds it on one GPU"), style="yellow")
    for note in est.notes:
        head.append("\n" + _(note), style="dim")
    top = Table.grid(padding=(0, 2))
    top.add_column(no_wrap=True)
    top.add_column(ratio=1)
    top.add_row(parts, head)
    cards = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, width=min(width, 100))
    cards.add_column(_("card"), no_wrap=True, overflow="ellipsis", ratio=1, min_width=12)
    cards.add_column(_("memory"), justify="right", no_wrap=True, min_width=8)
    cards.add_column(_("rate"), justify="right", no_wrap=True, min_width=8)
    cards.add_column(_("fits?"), no_wrap=True)
    cards.add_column(_("headroom"), justify="right", no_wrap=True, min_width=9)
    for f in mine:
        gpu = f.card.gpu if f.card.count == 1 else f"{f.card.count}x {f.card.gpu}"
        name = Text(printable(f.card.instance or ""), style="cyan")
        if gpu:
            name.append(f" {printable(gpu)}", style="dim")
        memory = _gib(f.card.memory_gib) if f.card.memory_mib > 0 else MISSING
        rate = format_rate_per_hour(f.card.rate, currency) if f.card.rate else MISSING
        cards.add_row(name, memory, rate, *_verdict(f, est.total_gib))
    if mine:
        cards.add_section()
    for f in common:
        cards.add_row(f.card.gpu, _gib(f.card.memory_gib), "", *_verdict(f, est.total_gib))
    grid = Table.grid(expand=True)
    grid.add_column()
    grid.add_row(top)
    grid.add_row(cards)
    return grid


class FitScreen(Screen[None]):
    """Not bound to a key here: the dashboard pushes it (`v`), with its fleet's cards."""

    BINDINGS = [Binding("escape", "app.pop_screen", N_("Back"))]
    DEFAULT_CSS = """
    FitScreen > VerticalScroll { padding: 0 1; }
    FitScreen .row { height: 1; }
    FitScreen #first-row { margin-top: 1; }
    FitScreen .row > Label { width: 8; }
    FitScreen Input, FitScreen Input:focus { border: none; height: 1; padding: 0 1; }
    FitScreen Input:focus { background: $boost; }
    FitScreen #model { width: 1fr; }
    FitScreen #context, FitScreen #batch { width: 10; }
    FitScreen Select { width: 22; }
    FitScreen SelectCurrent { border: none; height: 1; padding: 0 1; }
    FitScreen #fit-error { color: $error; height: auto; display: none; }
    FitScreen #fit-result { height: auto; margin-top: 1; }
    """

    def __init__(self, fleet: Callable[[], list[Card]], currency: str, model: str = "qwen2.5-7b") -> None:
        super().__init__()
        translate_bindings(self)
        self._fleet, self._currency, self._model = fleet, currency, model

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text(_("VRAM fit: will it fit?"), style="bold"))
            with Horizontal(classes="row", id="first-row"):
                yield Label(_("Model"))
                yield Input(value=self._model, placeholder=_("7b, qwen2.5-7b or a config.json path"), id="model")
                yield Select([(d, d) for d in DTYPES], value="bf16", allow_blank=False, id="dtype")
            with Horizontal(classes="row"):
                yield Label(_("Context"))
                yield Input(value="4096", id="context")
                yield Label(" " + _("Batch"), classes="inline")
                yield Input(value="1", id="batch")
                yield Select(
                    [(_(TRAIN_LABELS[t]), t) for t in TRAIN_MODES], value="none", allow_blank=False, id="train"
                )
            yield Static("", id="fit-error")
            yield Static("", id="fit-result")
        yield Footer()

    def on_resize(self) -> None:
        self.recompute()

    def on_mount(self) -> None:
        fit_labels(self)
        self.query_one("#model", Input).focus()
        self.recompute()

    def on_input_changed(self, _event: Input.Changed) -> None:
        self.recompute()

    def on_select_changed(self, _event: Select.Changed) -> None:
        self.recompute()

    def recompute(self) -> None:
        error, result = self.query_one("#fit-error", Static), self.query_one("#fit-result", Static)
        dtype, train = self.query_one("#dtype", Select).value, self.query_one("#train", Select).value
        try:
            spec = resolve_model(self.query_one("#model", Input).value.strip() or "7b")
            context = parse_positive(self.query_one("#context", Input).value.strip(), _("context"))
            batch = parse_positive(self.query_one("#batch", Input).value.strip(), _("batch"))
            est = estimate(spec, str(dtype), context, batch, str(train))
        except GpuTuiError as exc:  # half-typed input: say why, keep the last result
            error.update(Text(exc.message))
            error.display = True
            return
        error.display = False
        # the padding and the scroll bar take 4 cells
        result.update(fit_result(est, self._fleet(), self._currency, max(40, self.size.width - 4)))
