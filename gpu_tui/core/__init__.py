"""Pure domain layer: models, parsers, cost math. No I/O, no third-party transport."""
