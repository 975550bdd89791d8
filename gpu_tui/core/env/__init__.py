"""An instance's environment without I/O: the checks, conda's env list, package mirrors."""
