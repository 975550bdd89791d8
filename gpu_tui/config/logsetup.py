"""The diagnostics log: a rotating file in the platformdirs log dir, with secrets redacted."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

__all__ = ["RedactingFilter", "setup_logging", "redact"]

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_secrets: set[str] = set()


def redact(secret: str) -> None:
    """Register a value that must never appear in the log (a password typed or loaded)."""
    if len(secret) >= 3:
        _secrets.add(secret)


class RedactingFilter(logging.Filter):
    """Replaces registered secrets in every record; a last line of defence, not the first."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _secrets:
            msg = record.getMessage()
            for s in _secrets:
                msg = msg.replace(s, "***")
            record.msg, record.args = msg, None
        return True


def setup_logging(log_file: Path, *, debug: bool = False) -> None:
    """Log to `log_file` (1 MB x 3); never to the terminal, which belongs to the UI or the CLI."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            log_file, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
        )
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.addFilter(RedactingFilter())
    root.handlers[:] = [handler]
    # asyncssh logs every channel at INFO; keep it for --debug only
    logging.getLogger("asyncssh").setLevel(logging.DEBUG if debug else logging.WARNING)
