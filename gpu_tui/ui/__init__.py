"""The Textual dashboard: the only layer that imports Textual."""
