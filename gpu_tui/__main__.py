"""`python -m gpu_tui` runs the same entry point as the `gpu-tui` console script."""

from gpu_tui.cli import main

raise SystemExit(main())
