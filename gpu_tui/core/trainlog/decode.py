"""A job log's raw bytes -> text: the one decoder every log path uses (`jobs`, `logs`, the log
screen, the watch loop's log ends).

A job writes whatever its locale says: UTF-8 on most machines, GBK/GB18030 on a Chinese Windows
or a GB locale (docs/FIELD_NOTES.md, "Training logs"). The order tried: UTF-8, then the
instance locale's encoding where it is known (`locale charmap` when the job started, kept in the
job's `charset` file), then GB18030 when the bytes decode into Chinese text. ASCII, and so every
number, decodes the same in all of them, so a wrong guess never loses a number.

Pure: no I/O.
"""

from __future__ import annotations

import codecs

__all__ = ["LogDecoder", "codec_for_charset", "sniff_encoding", "decode_log", "as_log_bytes"]

_DECIDE_BYTES = 256  # how much of the line after the first invalid UTF-8 decides the encoding
_GBK_NAMES = {"gbk", "gb2312", "gb18030", "cp936"}


def codec_for_charset(charset: str | None) -> str | None:
    """A locale's charmap (`UTF-8`, `GBK`, `GB18030`, `BIG5`, `ISO-8859-1`, `ANSI_X3.4-1968`...)
    as the Python codec to try after UTF-8, or None when it adds nothing (unknown, UTF-8, ASCII).
    GBK and GB2312 become GB18030, their superset: a GBK log decodes the same in it."""
    if not charset:
        return None
    try:
        name = codecs.lookup(charset.strip()).name
    except (LookupError, ValueError):
        return None
    if name in ("utf-8", "ascii") or name.startswith("utf-"):
        return None
    return "gb18030" if name in _GBK_NAMES else name


def _decodes(window: bytes, codec: str, cut: bool) -> str | None:
    """`window` decoded strictly, or None; `cut`: it may end inside a character."""
    for end in (len(window), len(window) - 1, len(window) - 2, len(window) - 3) if cut else (len(window),):
        try:
            return window[: max(0, end)].decode(codec)
        except UnicodeDecodeError:
            continue
    return None


def _looks_gb18030(window: bytes, cut: bool) -> bool:
    """The bytes decode as GB18030 (GBK's superset) into at least two CJK characters (one
    could be junk that happens to decode)."""
    text = _decodes(window, "gb18030", cut)
    return text is not None and sum(1 for c in text if "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef") >= 2


class LogDecoder:
    """Incremental bytes -> text for one log, deciding its encoding once.

    UTF-8 until the first invalid UTF-8 sequence. There the rest of its line (up to 256 bytes)
    decides: if it decodes in the locale's encoding (`charset`), that is the log's encoding from
    that byte on; else if it decodes as GB18030 into CJK text, GB18030; else the sequence becomes
    U+FFFD and UTF-8 goes on. The decision waits for that window to arrive, so it never depends
    on where a chunk ended, and it sticks for the log. `switch` skips the guessing: a window
    `sniff_encoding` already read says which codec from which byte on. Limit when streaming: a
    GBK character before the first invalid sequence that happens to be valid UTF-8 (about 1 in
    12) stays mis-decoded; a window read whole avoids that on the line where the switch is.
    """

    __slots__ = ("_buf", "_other", "_codec", "_hint", "_seen", "_open_end", "_planned", "switched_at")

    def __init__(self, charset: str | None = None, *, switch: tuple[str, int] | None = None) -> None:
        self._buf = b""
        self._hint = codec_for_charset(charset)
        self._other: codecs.IncrementalDecoder | None = None
        self._codec = "utf-8"
        self._seen = 0  # bytes taken so far, held ones included
        self._open_end = False  # sniffing a window: its last character may be cut
        self._planned = switch
        self.switched_at: int | None = None
        """The byte offset where the log turned out not to be UTF-8."""
        if switch is not None and switch[1] <= 0:
            self._switch(switch[0], 0)

    @property
    def encoding(self) -> str:
        """`utf-8` until the log showed another encoding, then that codec's name."""
        return self._codec

    def _switch(self, codec: str, at: int) -> codecs.IncrementalDecoder:
        dec = codecs.getincrementaldecoder(codec)(errors="replace")
        self._other, self._codec, self.switched_at, self._planned = dec, codec, at, None
        return dec

    def decode(self, chunk: bytes, final: bool = False) -> str:
        if self._other is not None:
            self._seen += len(chunk)
            return self._other.decode(chunk, final)
        planned = self._planned
        if planned is not None and self._seen + len(chunk) > planned[1]:
            head = max(0, planned[1] - self._seen)  # the planned byte is in this chunk
            text = self._utf8(chunk[:head], False)
            self._seen += len(chunk) - head
            held, self._buf = self._buf, b""  # nothing, unless a window decided otherwise
            if self._other is not None:
                return text + self._other.decode(held + chunk[head:], final)
            return text + self._switch(planned[0], planned[1]).decode(held + chunk[head:], final)
        return self._utf8(chunk, final)

    def _utf8(self, chunk: bytes, final: bool) -> str:
        start = self._seen - len(self._buf)  # the offset of data[0] in the log
        self._seen += len(chunk)
        data = self._buf + chunk if self._buf else chunk
        self._buf = b""
        out: list[str] = []
        while data:
            try:
                out.append(data.decode("utf-8"))
                break
            except UnicodeDecodeError as e:
                out.append(data[: e.start].decode("utf-8"))
                rest = data[e.start :]
                at = start + e.start
                if e.reason == "unexpected end of data" and e.end == len(data) and not final:
                    self._buf = rest  # a character split by the chunk's end
                    break
                newline = rest.find(b"\n")
                end = min(_DECIDE_BYTES, newline if newline >= 0 else len(rest))
                if end == len(rest) and newline < 0 and len(rest) < _DECIDE_BYTES and not final:
                    self._buf = rest  # the window that decides is not all here yet
                    break
                cut = end == _DECIDE_BYTES or (self._open_end and end == len(rest))
                window = rest[:end]
                if self._hint is not None and _decodes(window, self._hint, cut) is not None:
                    out.append(self._switch(self._hint, at).decode(rest, final))
                    break
                if _looks_gb18030(window, cut):
                    out.append(self._switch("gb18030", at).decode(rest, final))
                    break
                out.append("\ufffd")
                data = rest[e.end - e.start :]
                start = at + e.end - e.start
        return "".join(out)


def sniff_encoding(data: bytes, charset: str | None = None) -> tuple[str, int] | None:
    """For a window of a log read whole: (codec, from which byte) for LogDecoder's `switch`, or
    None when it is UTF-8 throughout. The switch moves back to the start of the line where the
    log showed its encoding, when that line's earlier bytes decode in it too: a GBK character
    there that is valid UTF-8 by chance is read right. Earlier lines stay UTF-8."""
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    probe = LogDecoder(charset)
    probe._open_end = True  # a log read while it is written can end inside a character
    probe.decode(data, final=True)
    at = probe.switched_at
    if at is None:
        return None
    line = data.rfind(b"\n", 0, at) + 1
    try:
        data[line:at].decode(probe.encoding)
    except UnicodeDecodeError:
        return probe.encoding, at
    return probe.encoding, line


def as_log_bytes(data: bytes | str) -> bytes:
    """A log's bytes; text (surrogate-escaped or not) back to the bytes it came from."""
    if isinstance(data, bytes):
        return data
    try:
        return data.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no decoder escaped
        return data.encode("utf-8", "replace")


def decode_log(data: bytes | str, charset: str | None = None) -> str:
    """A whole window of a log as text, as LogDecoder reads it (the numbers always survive)."""
    raw = as_log_bytes(data)
    return LogDecoder(charset, switch=sniff_encoding(raw, charset)).decode(raw, final=True)
