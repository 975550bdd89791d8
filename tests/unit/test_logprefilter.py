"""The log rules' prefilters are sound: on every line of the log corpus the shortcut path says
exactly what the full recognisers say.

The prefilters (core/trainlog/failures `_ANY_WORD`, counters `_ANY_COUNTER_WORD`, `_plain`'s
word checks, the run-length hints' words, line `_head_start` and `_KW_WORDS`) skip recognisers that cannot
match. A recogniser changed without its prefilter (a new failure row, a hint branch with a new
word) then fails here on the corpus line that shows it, not on a user's log.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from logcorpus import CASES, IDS, stream_lines

from gpu_tui.core.trainlog import counters as logcount
from gpu_tui.core.trainlog import failures as logfail
from gpu_tui.core.trainlog.counters import counters, epochs_hint, steps_hint
from gpu_tui.core.trainlog.failures import line_failure, line_failure_unfiltered
from gpu_tui.core.trainlog.line import parse_line, strip_rank


@cache
def _lines(path: Path) -> tuple[str, ...]:
    """Each distinct line the rules are given for a log (tests/logcorpus.py)."""
    return tuple(dict.fromkeys(stream_lines(path)))


def _same(a: object, b: object) -> bool:
    return repr(a) == repr(b)  # NaN metrics: equal as printed, never as floats


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_prefiltered_path_says_what_the_full_recognisers_say(path: Path) -> None:
    for line in _lines(path):
        body = strip_rank(line)[1]
        assert _same(parse_line(line), parse_line(line, prefilter=False)), line
        assert line_failure(body) == line_failure_unfiltered(body), line
        assert _same(counters(body), counters(body, prefilter=False)), line
        assert epochs_hint(line) == epochs_hint(line, prefilter=False), line
        assert steps_hint(line) == steps_hint(line, prefilter=False), line


def test_the_corpus_exercises_every_prefilter() -> None:
    # the comparison above proves something only where the recognisers find things
    lines = [line for path in CASES for line in _lines(path)]
    bodies = [strip_rank(line)[1] for line in lines]
    assert len({line_failure_unfiltered(b) for b in bodies} - {None}) >= 10
    assert sum(parse_line(line, prefilter=False).progress is not None for line in lines) > 1000
    assert sum(counters(b, prefilter=False) is not None for b in bodies) > 100
    assert {epochs_hint(line, prefilter=False) for line in lines} - {None}
    assert {steps_hint(line, prefilter=False) for line in lines} - {None}
    # ... and the prefilters do skip: most lines hold no failure keyword
    assert sum(logfail._ANY_WORD.search(b) is None for b in bodies) > 0.9 * len(bodies)


def test_the_keyword_prefilters_hold_every_row_of_their_tables() -> None:
    for words, _ in logfail._FAILURE_FORMS:
        for word in words:
            assert logfail._ANY_WORD.search(f"x {word} x"), word
    for words, _ in logcount._COUNTER_FORMS:
        for word in words:
            assert logcount._ANY_COUNTER_WORD.search(f"x {word} x"), word


@pytest.mark.parametrize(
    "line",
    [
        "Epoch 1:  45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.523]",
        "   294/299      2.3G   0.02307   0.01692    0   0.03999   92   640:  45%|█▍ | 17/38 [00:04<00:05,  3.80it/s]",
        "x: ١٢%|██| ٣/٤ [00:01<00:02, 1.00it/s]",  # Arabic-Indic digits: \d takes them
        "x: 1٢%|██| 3/4 [00:01<00:02, 1.00it/s]",
        "a: 3/٤ [00:01<00:02, 1.00it/s]",
        "12.5.5%|| 7 [00:01, 1.00it/s]",
        "abc|def|45%|█| 3/4it [00:01<00:02, 1.00it/s]",
        "1045%|█| 3/4 [00:01<00:02, 1.00it/s]",
        "|x| 3 [00:01, 1.00it/s]",
        "ſtep 100/200 loss 1.0",  # `ſ` is an `s` to an IGNORECASE pattern, not to str.lower()
        "İter 5/10 loſs 2.0",
        "epoch: 3 ıter 4/9 LOSS 1.5",
        "EPOCH 3/10",
        "Learning Rate 0.1 then ACC@1 12.5",
    ],
)
def test_prefiltered_bar_heads_and_counters_on_odd_lines(line: str) -> None:
    assert _same(parse_line(line), parse_line(line, prefilter=False))
