"""Typed messages of the dashboard; the high-rate one coalesces per instance."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

__all__ = ["InstanceChanged"]


@dataclass
class InstanceChanged(Message):
    """Something about instance `name` changed; a newer one for the same name supersedes it."""

    name: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, InstanceChanged) and message.name == self.name
