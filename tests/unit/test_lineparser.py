"""LineParser (core/trainlog/line) says what parse_line says, line for line, on the real corpus
and on its lines with other digits.

LineParser runs, on a line of a shape it has seen (every digit read as `0`), only the
recognisers that found something on that shape before. That is sound only while no recogniser's
answer turns on a digit's value rather than on its place: a new pattern with a literal digit, or
a form that gives up on a value, fails here on the corpus line that shows it.
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest
from logcorpus import CASES, IDS, stream_lines

from gpu_tui.core.trainlog import failures as logfail
from gpu_tui.core.trainlog import line as logline
from gpu_tui.core.trainlog.line import LineParser, parse_line

DIGITS = "0123456789"
_lines = stream_lines


def _same(a: object, b: object) -> bool:
    return repr(a) == repr(b)  # NaN metrics: equal as printed, never as floats


def _other_digits(line: str, rng: random.Random) -> str:
    """The line with every ASCII digit drawn anew (zeros and leading digits included)."""
    return "".join(rng.choice(DIGITS) if c in DIGITS else c for c in line)


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_a_log_read_in_order_says_what_parse_line_says(path: Path) -> None:
    parser = LineParser()
    for line in _lines(path):
        assert _same(parser.parse(line), parse_line(line)), line


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_a_shape_seen_before_with_other_digits_says_what_parse_line_says(path: Path) -> None:
    rng = random.Random(path.name)
    for line in dict.fromkeys(_lines(path)):
        parser = LineParser()
        parser.parse(line)  # the plan comes from the log's own line
        for _ in range(3):
            other = _other_digits(line, rng)
            assert _same(parser.parse(other), parse_line(other)), (line, other)
        parser = LineParser()
        parser.parse(_other_digits(line, rng))  # ... or from the same shape with other digits
        assert _same(parser.parse(line), parse_line(line)), line


def test_the_corpus_is_mostly_shapes_seen_before() -> None:
    # the tests above prove something only where plans are used
    parser, lines = LineParser(), 0
    for path in CASES:
        for line in _lines(path):
            parser.parse(line)
            lines += 1
    assert parser.hits > 0.6 * lines
    # the bound holds every shape of the 136 logs together: read again, each line is a hit
    hits, short = parser.hits, 0
    for path in CASES:
        for line in _lines(path):
            parser.parse(line)
            short += len(line.encode("utf-8", "surrogatepass")) <= logline._MAX_SHAPE_BYTES
    assert parser.hits - hits == short


def test_a_line_whose_answer_is_its_shapes_runs_no_recogniser(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = LineParser()
    no_digit = "Traceback (most recent call last):"
    nothing = "2024-05-01 12:00:01 INFO saving checkpoint to /ckpt/step-300"
    zeros = "   - Freeze Layers: 0"  # a zero is a digit: `Layers: 1` is another line of its shape
    for line in (no_digit, nothing, zeros):
        parser.parse(line)

    def no_recogniser(*args: object) -> None:
        raise AssertionError("a recogniser ran")

    monkeypatch.setattr(logline, "_parse", no_recogniser)
    assert parser.parse(no_digit) is parser.parse(no_digit)
    assert parser.parse(nothing.replace("300", "450")) is logline.EMPTY
    with pytest.raises(AssertionError, match="a recogniser ran"):
        parser.parse(zeros.replace("0", "1"))


def test_a_plan_whose_recogniser_finds_nothing_reads_the_line_whole() -> None:
    bar = " 45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s]"
    trainer = "{'loss': 1.6462, 'grad_norm': 17.5, 'learning_rate': 4.2e-05, 'epoch': 0.5}"
    parser = LineParser()
    parser.parse(bar)
    # the bar's plan filed under the dict's shape: its tqdm form finds nothing there
    parser._plans[trainer.encode().translate(logline._SHAPE)] = parser._plans[bar.encode().translate(logline._SHAPE)]
    info = parser.parse(trainer)
    assert dict(info.metrics) == {"loss": 1.6462, "grad_norm": 17.5, "learning_rate": 4.2e-05, "epoch": 0.5}
    assert parser.hits == 0
    assert _same(parser.parse(trainer), parse_line(trainer)) and parser.hits == 1


def test_no_failure_keyword_holds_a_digit() -> None:
    # has_failure_word is taken as the same for a whole shape
    words = [w for row, _ in logfail._FAILURE_FORMS for w in row]
    assert words and not [w for w in words if any(c in DIGITS for c in w)]


def test_the_plans_kept_are_bounded() -> None:
    parser = LineParser()
    for i in range(logline._MAX_SHAPES + 10):
        parser.parse("x" * (i % 50) + "y" * (i // 50) + " loss: 1.0")
    assert len(parser._plans) <= logline._MAX_SHAPES


def test_a_saved_parser_keeps_no_plans() -> None:
    parser = LineParser()
    parser.parse("{'loss': 1.6462, 'epoch': 0.5}")
    again = pickle.loads(pickle.dumps(parser))
    assert isinstance(again, LineParser) and not again._plans
    assert dict(again.parse("{'loss': 1.5, 'epoch': 0.6}").metrics) == {"loss": 1.5, "epoch": 0.6}


def test_a_long_line_is_read_whole_and_no_plan_is_kept_for_it() -> None:
    parser = LineParser()
    line = "x" * 2000 + " loss: 0.25"
    assert _same(parser.parse(line), parse_line(line)) and dict(parser.parse(line).metrics) == {"loss": 0.25}
    assert not parser._plans and parser.hits == 0
