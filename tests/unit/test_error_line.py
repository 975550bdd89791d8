"""`title: message`, one spelling: GpuTuiError.line() / error_line(), remote text made printable."""

from __future__ import annotations

from gpu_tui.core.errors import CommandTimeout, ConnectionLost, GpuTuiError, InputError, error_line

HOSTILE = "gpu: said [bold]x[/] \x1b[31mred\x1b[0m\x07 \x1b]0;title\x07end"


def test_line_is_title_and_message() -> None:
    assert InputError("nothing to run").line() == "refused: nothing to run"
    assert CommandTimeout("gpu: slow").line() == "timeout: gpu: slow"


def test_line_strips_escapes_and_keeps_markup_literal() -> None:
    line = ConnectionLost(HOSTILE).line()
    assert line == "offline: gpu: said [bold]x[/] red? end"
    assert "\x1b" not in line and "\x07" not in line
    assert "[bold]x[/]" in line  # brackets are text here; the UI hands it on as Text / markup=False


def test_error_line_for_any_exception() -> None:
    assert error_line(InputError("no")) == "refused: no"
    assert error_line(OSError(28, "No space left on device")) == "OSError: [Errno 28] No space left on device"
    assert error_line(RuntimeError()) == "RuntimeError"
    assert error_line(ValueError("a\x1b[2Jb")) == "ValueError: ab"


def test_every_error_has_a_title() -> None:
    def subclasses(cls: type[GpuTuiError]) -> list[type[GpuTuiError]]:
        return [cls] + [s for c in cls.__subclasses__() for s in subclasses(c)]

    for cls in subclasses(GpuTuiError):
        assert cls.title and ": " not in cls.title, cls
