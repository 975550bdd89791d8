"""Where a traceback says a job failed (issue 25): the last frame in the job's own code, the
`File "train.py", line 42, in forward` above the exception line, for the hint's "read the last
frame". Library frames (site-packages, the standard library) come after the user's and rarely
need editing: the last frame outside them is named, else the very last one.
"""

from __future__ import annotations

import re

__all__ = ["last_frame"]

_FRAME = re.compile(r'^(?:\[rank\d+\]:)?\s*File "([^"\n]+)", line (\d+), in ([^\s]+)', re.MULTILINE)
_LIBRARY = ("site-packages/", "dist-packages/", "/lib/python3", "<frozen ", "\\lib\\")
_SHOWN_PARTS = 3  # `proj/models/unet.py`: enough of a long path to find the file


def _short(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-_SHOWN_PARTS:]) if len(parts) > _SHOWN_PARTS else path


def last_frame(text: str) -> str | None:
    """`models/unet.py:42 in forward` of the last traceback in `text` (display lines; `[rank0]: `
    prefixes and all), or None where it holds no frame."""
    frames = [(m[1], m[2], m[3]) for m in _FRAME.finditer(text)]
    if not frames:
        return None
    own = [f for f in frames if not any(lib in f[0] for lib in _LIBRARY)]
    path, line, func = (own or frames)[-1]
    return f"{_short(path)}:{line} in {func}"
