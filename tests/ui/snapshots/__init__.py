"""Snapshot tests of every screen (pytest-textual-snapshot), grouped by feature; helpers in shots.py."""
