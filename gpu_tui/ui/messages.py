"""Typed messages of the dashboard (fleet updates are not messages: the dashboard marks the
instance dirty and its paint timer repaints the changed rows in one batch)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from gpu_tui.core.jobs import JobInfo

__all__ = ["JobEnded"]


@dataclass
class JobEnded(Message):
    """A job on instance `name` finished, failed or was stopped (never coalesced: each is news)."""

    name: str
    job: JobInfo
