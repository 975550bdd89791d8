"""gpu-tui: a keyboard-driven terminal dashboard for rented GPU machines."""

import warnings

__all__ = ["__version__"]

__version__ = "0.1.0"

# cryptography 51 deprecates DSA and asyncssh (2.24) names its DSA classes at import: without
# this, every command a user runs would print ten lines of warnings before its own answer
warnings.filterwarnings("ignore", message="DSA is deprecated", module=r"asyncssh\.")
