"""Typed messages of the dashboard (fleet updates are batched by the app's paint timer instead)."""

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
