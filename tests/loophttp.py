"""The HTTP server the loopback stand-ins for services use (notifications, provider APIs).

A client that gives up mid-reply (the tests of timeouts and dead targets do that on purpose)
is expected there: its broken pipe is not printed as an error."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer"]


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)
