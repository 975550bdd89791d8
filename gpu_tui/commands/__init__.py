"""CLI subcommands, one module each; every one calls the same service functions the dashboard uses.

Exit codes (CONTRACTS.md): 0 done; 2 usage or configuration error, or input refused before
anything ran; 3 done, but some instance was unreachable or a step failed.
"""

__all__ = ["EXIT_OK", "EXIT_USAGE", "EXIT_PARTIAL"]

EXIT_OK, EXIT_USAGE, EXIT_PARTIAL = 0, 2, 3
