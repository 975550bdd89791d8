"""gpu-tui: a keyboard-driven terminal dashboard for rented GPU machines."""

__all__ = ["__version__"]

__version__ = "0.1.0"
