"""Typed messages of the dashboard; the high-rate one coalesces per instance."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from gpu_tui.core.jobs import JobInfo

__all__ = ["InstanceChanged", "JobEnded"]


@dataclass
class InstanceChanged(Message):
    """Something about instance `name` changed; a newer one for the same name supersedes it."""

    name: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, InstanceChanged) and message.name == self.name


@dataclass
class JobEnded(Message):
    """A job on instance `name` finished, failed or was stopped (never coalesced: each is news)."""

    name: str
    job: JobInfo
