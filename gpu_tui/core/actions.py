"""The dashboard's action ids (CONTRACTS.md): the names users remap in the config's `[keys]` table.

Kept in core so the config layer can validate `[keys]` without importing the UI.
"""

from __future__ import annotations

__all__ = ["ACTION_IDS"]

ACTION_IDS: tuple[str, ...] = (
    "run_job",
    "stop_job",
    "detail",
    "cost",
    "edit",
    "logs",
    "conda",
    "check",
    "sync",
    "shell",
    "shutdown",
    "shutdown_all",
    "add",
    "quit",
    "help",
    "trust_key",
    "reconnect",
)
