"""core/trainlog/series_decode.SeriesDecoder: a series file fed in pieces decodes as it does
whole (resets, run files and event files included), and a saved decoder is taken up only by
the python that wrote it."""

from __future__ import annotations

import json
import marshal

from gpu_tui.core.trainlog.series_decode import DECODER_FORMAT, SeriesDecoder, decode_series


def rows() -> list[str]:
    out = ['{"gen": "abc"}']
    for s in range(1, 40):
        out.append(json.dumps(["loss", s, 1 / s, None]))
        out.append(json.dumps(["train/loss", s, 2 / s, 1000.0 + s, "tensorboard", "/w/runs/a/events.1"]))
        out.append(json.dumps(["val_acc", s, s / 40, 1000.0 + s, "tensorboard", "/w/logs/validation/events.2"]))
        out.append(json.dumps(["val_acc", s, s / 80, 1000.0 + s, "tensorboard", "/w/logs/train/events.3"]))
        if s == 20:
            out.append(json.dumps({"reset": "csv"}))
        out.append(json.dumps(["epoch_loss", s, 3 / s, None, "csv"]))
    out.append(json.dumps(["train/loss", 30, 0.5, 2000.0, "tensorboard", "/w/runs/b/events.4"]))  # resumed
    return [r + "\n" for r in out]


def test_fed_in_any_pieces_it_decodes_as_the_whole_file() -> None:
    text = "".join(rows())
    whole = decode_series(text)
    assert ("csv", "epoch_loss") in whole and len(whole["csv", "epoch_loss"]) == 20  # from the reset on
    assert [x for x, _v, _t in whole["tensorboard", "train/loss"]] == [*range(1, 30), 30]
    assert {"validation/val_acc", "train/val_acc"} <= {t for s, t in whole if s == "tensorboard"}
    for cut in (1, 7, 80, 81, len(rows()) - 1):
        decoder = SeriesDecoder()
        decoder.feed("".join(rows()[:cut]))
        first = decoder.result()  # asked midway, as a running job's reads are: it goes on unchanged
        decoder.feed("".join(rows()[cut:]))
        assert decoder.result() == whole, cut
        assert first == decode_series("".join(rows()[:cut]))


def test_a_saved_decoder_goes_on_where_it_stopped_and_another_pythons_is_refused() -> None:
    half = len(rows()) // 2
    decoder = SeriesDecoder()
    decoder.feed("".join(rows()[:half]))
    again = SeriesDecoder.loads(decoder.dumps())
    assert again is not None
    again.feed("".join(rows()[half:]))
    assert again.result() == decode_series("".join(rows()))
    other = marshal.dumps(((1, (3, 7), 4), decoder.by_stream))
    assert SeriesDecoder.loads(other) is None and DECODER_FORMAT[1] != (3, 7)
    assert SeriesDecoder.loads(b"not marshal") is None and SeriesDecoder.loads(marshal.dumps([1, 2])) is None
