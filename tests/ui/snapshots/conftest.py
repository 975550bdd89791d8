"""Every snapshot is taken in one fixed time zone: screens that print a local time (the job
log's `done 14:32`, the cost screen's date and its days) must not depend on the machine's."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def fixed_time_zone() -> Iterator[None]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()
