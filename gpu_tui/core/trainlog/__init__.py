"""Training logs, from raw bytes to meaning: the decoder, a tiny terminal for display lines, the
line recognisers, the whole-log summary. These modules import only each other:
services/notify/bundle.py ships them to instances."""
