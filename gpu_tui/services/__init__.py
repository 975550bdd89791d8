"""Async use-cases shared by the CLI and the dashboard. No Textual here."""
