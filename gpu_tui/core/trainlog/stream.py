"""Raw bytes of a job's log -> the lines a person would see, safe to put on a terminal.

A job's log is tailed over SSH in chunks that split anywhere: inside a UTF-8 character, inside
`\\r\\n`, inside an escape sequence. LogStream is a tiny terminal emulator fed those chunks. It
models what training scripts really write (docs/FIELD_NOTES.md, "Training logs"):

- tqdm redraws its bar with `\\r` + text (+ space padding) and no `\\n`: a `\\r` means the next
  text *replaces* the row, so only the latest state of a progress line is kept, never
  thousands of copies. Its superseded states still come out, marked not final, so a
  LogSummary can follow the loss in a bar's postfix.
- stacked tqdm bars (`position=1`, HF's eval bar, Lightning's validation bar) go down with
  `\\n` and back up with `ESC[A`; rows the cursor may come back to are held as "live" instead
  of being committed on every redraw.
- a print glued onto the end of a bar (`...36.10it/s]Epoch 2 done\\n`, no separator) is split
  off as its own line, as if a `\\r` stood before it; so is the `\\r` form.
- everything else that is not text goes: CSI/OSC/DCS sequences, C0/C1 controls, DEL, bidi
  overrides. `\\b` moves left (Keras and spinners redraw that way), `\\t` becomes spaces.
- bytes become text in core/trainlog/decode: UTF-8, else the instance locale's encoding, else GB18030.

Pure and bounded: no I/O, no clocks; memory stays bounded however long the log and however
long a line without a newline (rows are cut at `max_line_chars`, only the last `max_lines`
final lines are kept). The caller keeps the byte offset it resumes from.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from gpu_tui.core.trainlog.decode import LogDecoder

__all__ = [
    "TRUNCATION_MARK",
    "MAX_DEPTH",
    "LogEvent",
    "StreamUpdate",
    "LogStream",
    "feed_all",
]

TRUNCATION_MARK = " […]"
"""Appended to a line that was longer than `max_line_chars` (the rest is dropped)."""

MAX_DEPTH = 32
"""Most rows a cursor-up may climb back (tqdm stops drawing bars at its 20th row)."""


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One line out of the stream, in stream order."""

    text: str
    """Printable text: no escapes, no control characters, trailing spaces removed."""
    final: bool
    """True: a completed line (it will not change). False: a state of a redrawn line (a tqdm
    bar, a `\\r` progress print) that a later state replaced; shown nowhere, useful to parsers."""


@dataclass(frozen=True, slots=True)
class StreamUpdate:
    """What one `feed` (or `close`) produced."""

    events: tuple[LogEvent, ...]
    """Completed lines and superseded progress states, in the order they happened."""
    live: tuple[str, ...]
    """The rows still on "screen" after this chunk, top to bottom, blank ones left out: the
    line being written (a tqdm bar, a partial line) and, under stacked bars, the rows the
    cursor may return to. Usually empty or one row. Replaces the previous update's `live`."""

    @property
    def lines(self) -> tuple[str, ...]:
        """Only the completed lines."""
        return tuple(e.text for e in self.events if e.final)


class _Row:
    """One screen row: its text, whether a redraw wrote it, whether it was cut."""

    __slots__ = ("text", "cr", "cut")

    def __init__(self) -> None:
        self.text = ""
        self.cr = False  # written after a bare \r or a cursor move: a progress-like row
        self.cut = False  # longer than max_line_chars; the rest was dropped


# Parser states (ECMA-48 subset).
_GROUND, _ESC, _CSI, _STR, _STR_ESC, _ESC_INTER = range(6)

# Everything that is not plain text: C0, DEL, C1, the bidi marks, embeddings, overrides and isolates
# (text that displays in another order than it reads is a spoofing tool, not log content) and the
# byte-order mark.
_SPECIAL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
# Characters dropped without effect, skipped as a run (a log full of NULs is one regex call).
_IGNORED = "".join(
    chr(c)
    for c in [
        *range(0x00, 0x20),
        0x7F,
        *range(0x80, 0xA0),
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0xFEFF,
    ]
    if chr(c) not in "\n\r\x1b\t\b\x0b\x0c\x9b\x90\x98\x9d\x9e\x9f"
)
_IGNORED_RUN = re.compile("[" + re.escape(_IGNORED) + "]+")
# Ends of an OSC/DCS/SOS/PM/APC string: BEL, ST (ESC \ or 0x9c), CAN, SUB; and \n, so a stray
# unterminated OSC cannot swallow the rest of the log as it would on a real terminal.
_STR_END = re.compile("[\x07\x1b\x9c\n\x18\x1a]")
_CSI_BODY = re.compile("[0-?]*[ -/]*")
_CSI_INTER = re.compile("[ -/]*")  # once an intermediate byte came, no more parameters
_CSI_MAX_PARAMS = 16
_STR_STARTS = {"]", "P", "X", "^", "_"}
_C1_STR_STARTS = {"\x90", "\x98", "\x9d", "\x9e", "\x9f"}
_TAB = 8

# The end of a tqdm bar: its `[elapsed<remaining, rate, postfix]` block, padding, then more text
# on the same row. What follows is a print that landed on the bar's row.
_GLUE = re.compile(r"\[(?:\d+:)?\d\d:\d\d(?:<(?:(?:\d+:)?\d\d:\d\d|\?))?, [^\[\]]*/[^\[\]]*\] *(?=\S)")


class LogStream:
    """Incremental bytes -> lines for one log file.

    `feed` each chunk as it arrives and show `lines` (the last `max_lines` completed lines)
    followed by the latest update's `live` rows. `close` at the end of the log commits what is
    still live, including a last line without a newline.

    Splitting the same bytes into chunks differently gives the same events, lines and final
    live rows: every decision is made on the decoded characters in order, never on where a
    chunk ended.
    """

    def __init__(
        self,
        max_lines: int = 5000,
        max_line_chars: int = 4096,
        *,
        charset: str | None = None,
        switch: tuple[str, int] | None = None,
    ) -> None:
        if max_lines < 1 or max_line_chars < 1:
            raise ValueError("max_lines and max_line_chars must be >= 1")
        self.max_line_chars = max_line_chars
        self.lines: deque[str] = deque(maxlen=max_lines)
        """The last `max_lines` completed lines, oldest first."""
        self.bytes_fed = 0
        """Bytes given to `feed` so far (the caller's offset bookkeeping can check against it)."""
        self.lines_seen = 0
        """Completed lines so far, including those `lines` no longer holds."""
        self.states_replaced = 0
        """Progress states replaced by a newer one (events with final=False)."""
        # bytes -> text (core/trainlog/decode): `charset` the instance locale's; `switch` what a window
        # read whole showed (decode.sniff_encoding)
        self._decoder = LogDecoder(charset, switch=switch)
        self._rows: list[_Row] = [_Row()]
        self._cur = 0  # cursor row in _rows
        self._col0 = True  # the cursor is at column 0: the next text replaces the row
        self._next_cr = False  # ... and makes it a redrawn (progress-like) row
        self._bs = 0  # the cursor stands this many characters left of the row's end (\b)
        # Cursor-up reach to allow for: redrawn rows this close above the cursor are held. One by
        # default so that the first `\n ... ESC[A` of a stacked bar already finds its row.
        self._depth = 1
        self._state = _GROUND
        self._csi = ""
        self._csi_inter = False
        self._events: list[LogEvent] = []

    # ------------------------------------------------------------------ public

    @property
    def encoding(self) -> str:
        """What the log's bytes are read as so far (`utf-8`, or the codec it turned out in)."""
        return self._decoder.encoding

    @property
    def live(self) -> tuple[str, ...]:
        """The rows not yet final, top to bottom, blank ones left out."""
        return tuple(self._render(r) for r in self._rows if r.text.strip())

    def feed(self, chunk: bytes) -> StreamUpdate:
        """Take the next bytes of the log; return what they completed and what is live now."""
        self.bytes_fed += len(chunk)
        self._process(self._decoder.decode(chunk))
        return self._update()

    def close(self) -> StreamUpdate:
        """End of the log: flush a trailing partial character, commit every live row.

        The stream can be fed again afterwards; it starts on a fresh line.
        """
        self._process(self._decoder.decode(b"", final=True))
        self._state = _GROUND  # an escape sequence cut off by the end of the log is dropped
        for i, row in enumerate(self._rows):
            if not row.text.strip() and (row.cr or i >= self._cur):
                continue  # a cleared bar, or the empty row the cursor stands on: not a line
            self._emit_final(row)
        self._rows = [_Row()]
        self._cur = 0
        self._col0, self._next_cr, self._bs = True, False, 0
        return self._update()

    # ------------------------------------------------------------------ parsing

    def _update(self) -> StreamUpdate:
        events = tuple(self._events)
        self._events.clear()
        return StreamUpdate(events=events, live=self.live)

    def _process(self, s: str) -> None:
        i, n = 0, len(s)
        while i < n:
            state = self._state
            if state == _GROUND:
                m = _SPECIAL.search(s, i)
                if m is None:
                    self._text(s[i:] if i else s)
                    return
                j = m.start()
                if j > i:
                    self._text(s[i:j])
                c = s[j]
                i = j + 1
                if c == "\n" or c == "\x0b" or c == "\x0c":
                    self._newline()
                elif c == "\r":
                    self._carriage_return()
                elif c == "\x1b":
                    self._state = _ESC
                elif c == "\t":
                    col = 0 if self._col0 else len(self._rows[self._cur].text) - self._bs
                    self._text(" " * (_TAB - col % _TAB))
                elif c == "\b":
                    if not self._col0:
                        self._bs = min(self._bs + 1, len(self._rows[self._cur].text))
                elif c == "\x9b":
                    self._state, self._csi, self._csi_inter = _CSI, "", False
                elif c in _C1_STR_STARTS:
                    self._state = _STR
                else:
                    run = _IGNORED_RUN.match(s, i)
                    if run is not None:
                        i = run.end()
            elif state == _STR:
                m = _STR_END.search(s, i)
                if m is None:
                    return
                i = m.end()
                c = m.group()
                if c == "\x1b":
                    self._state = _STR_ESC
                else:
                    self._state = _GROUND
                    if c == "\n":
                        self._newline()
            elif state == _CSI:
                m = (_CSI_INTER if self._csi_inter else _CSI_BODY).match(s, i)
                assert m is not None  # the patterns match the empty string
                body = m.group()
                if body:
                    if len(self._csi) < _CSI_MAX_PARAMS:
                        self._csi = (self._csi + body)[:_CSI_MAX_PARAMS]
                    if body[-1] <= "/":
                        self._csi_inter = True
                i = m.end()
                if i >= n:
                    return
                c = s[i]
                self._state = _GROUND
                if "@" <= c <= "~":
                    i += 1
                    self._csi_final(c, self._csi)
                # else: not a CSI after all; the character is read again as ground text
            elif state == _ESC:
                c = s[i]
                if c == "[":
                    self._state, self._csi, self._csi_inter = _CSI, "", False
                    i += 1
                elif c in _STR_STARTS:
                    self._state = _STR
                    i += 1
                elif " " <= c <= "/":
                    self._state = _ESC_INTER  # nF escapes, e.g. ESC ( B from tput sgr0
                    i += 1
                elif "0" <= c <= "~":
                    self._state = _GROUND
                    i += 1
                    if c == "M":  # reverse index: one row up
                        self._cursor_up(1)
                else:  # a control or non-ASCII: abandon the escape, read the character again
                    self._state = _GROUND
            elif state == _STR_ESC:
                if s[i] == "\\":
                    self._state = _GROUND
                    i += 1
                else:  # ESC inside a string starts a new sequence
                    self._state = _ESC
            else:  # _ESC_INTER
                c = s[i]
                if " " <= c <= "/":
                    i += 1
                else:
                    self._state = _GROUND
                    if "0" <= c <= "~":
                        i += 1

    def _csi_final(self, final: str, params: str) -> None:
        if params[:1] in ("?", "<", "=", ">"):
            return  # private modes (cursor visibility, ...)
        first = params.split(";", 1)[0]
        count = int(first) if first.isdigit() and len(first) <= 6 else 0
        if final == "A" or final == "F":
            self._cursor_up(max(count, 1))
        elif final == "B" or final == "E":
            self._cursor_down(max(count, 1))
        elif final == "G":
            if count <= 1:
                self._carriage_return()  # cursor to column 1
        elif final == "K":
            self._erase_line(count)
        # everything else (colours, absolute moves, screen clears) has no meaning in a log

    # ------------------------------------------------------------------ screen model

    def _carriage_return(self) -> None:
        self._col0, self._next_cr, self._bs = True, True, 0

    def _cursor_up(self, count: int) -> None:
        count = min(count, MAX_DEPTH)
        if count > self._depth:
            self._depth = count
        self._cur = max(0, self._cur - count)  # rows above the held ones are committed: clamp
        self._col0, self._next_cr, self._bs = True, True, 0

    def _cursor_down(self, count: int) -> None:
        self._cur = min(len(self._rows) - 1, self._cur + count)
        self._col0, self._next_cr, self._bs = True, True, 0

    def _erase_line(self, mode: int) -> None:
        row = self._rows[self._cur]
        if mode == 2 or self._col0:  # the whole row
            self._replace(row, cr=True)
            self._col0, self._bs = False, 0
        elif mode == 0 and self._bs:  # from the cursor to the end
            row.text = row.text[: len(row.text) - self._bs]
            row.cut = False
            self._bs = 0

    def _replace(self, row: _Row, cr: bool) -> None:
        if row.text.strip():
            self._events.append(LogEvent(self._render(row), False))
            self.states_replaced += 1
        row.text = ""
        row.cut = False
        row.cr = cr

    def _newline(self) -> None:
        row = self._rows[self._cur]
        self._col0, self._next_cr, self._bs = True, False, 0
        if self._cur == len(self._rows) - 1:
            self._rows.append(_Row())
        self._cur += 1
        # A plain line is final, and so is everything above it. A redrawn row (a bar) is held
        # while a cursor-up could still reach it.
        keep = self._depth if row.cr else 0
        if self._cur > keep:
            self._commit(self._cur - keep)

    def _commit(self, count: int) -> None:
        rows = self._rows
        for row in rows[:count]:
            if row.cr and not row.text.strip():
                continue  # a cleared bar (tqdm's `\r` + spaces) leaves no line
            self._emit_final(row)
        del rows[:count]
        self._cur -= count

    def _emit_final(self, row: _Row) -> None:
        text = self._render(row)
        self._events.append(LogEvent(text, True))
        self.lines.append(text)
        self.lines_seen += 1

    def _render(self, row: _Row) -> str:
        text = row.text.rstrip()
        return text + TRUNCATION_MARK if row.cut else text

    def _text(self, t: str) -> None:
        row = self._rows[self._cur]
        if self._col0:
            self._replace(row, self._next_cr)
            self._col0 = False
        if self._bs:  # overwrite what \b stepped back over, append the rest
            pos = len(row.text) - self._bs
            head = t[: self._bs]
            row.text = row.text[:pos] + head + row.text[pos + len(head) :]
            self._bs -= len(head)
            t = t[len(head) :]
            if not t:
                return
        if row.cut:
            return
        cap = self.max_line_chars
        if row.cr:
            t = self._split_glued(row, t)
        room = cap - len(row.text)
        if len(t) > room:
            row.text += t[:room]
            row.cut = True
        else:
            row.text += t

    def _split_glued(self, row: _Row, t: str) -> str:
        """If `t` lands after a finished tqdm bar on this row, retire the bar; return the rest."""
        old = row.text
        start = old.rfind("[")
        if start < 0 and "[" not in t:
            return t
        # Only split points a character-at-a-time feed would reach before the row is cut.
        limit = self.max_line_chars + 1
        combined = old + t[: max(0, limit - len(old))]
        m = _GLUE.search(combined, start if start >= 0 else len(old), limit)
        if m is None:
            return t
        p = m.end()
        bar = _Row()
        bar.text = combined[:p]
        self._events.append(LogEvent(self._render(bar), False))
        self.states_replaced += 1
        rest = old[p:] + t if p < len(old) else t[p - len(old) :]
        row.text = ""
        row.cr = False
        return rest


def feed_all(stream: LogStream, chunks: Iterable[bytes]) -> list[LogEvent]:
    """Feed every chunk and close; all events in order (tests and one-shot reads)."""
    events: list[LogEvent] = []
    for chunk in chunks:
        events.extend(stream.feed(chunk).events)
    events.extend(stream.close().events)
    return events
