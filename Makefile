# The developer loop (CONTRIBUTING.md). Everything runs from the project's own .venv.
# N: pytest-xdist workers (auto: tests/conftest.py's count; 0: serial, in one process).
# ARGS: more pytest arguments, e.g. make fast ARGS="-x -k conda".

PY := .venv/bin/python
N ?= auto
ARGS ?=
PYTEST := $(PY) -m pytest -q -n $(N) $(ARGS)
SOURCES := gpu_tui tests benchmarks scripts
SNAPSHOT_TESTS := tests/ui/snapshots tests/ui/test_snapshots_zh.py

.PHONY: help venv check test fast snapshots-update demo

help:
	@echo "make venv              .venv with gpu-tui editable and the test extras"
	@echo "make check             ruff check, ruff format --check, mypy, lint-imports"
	@echo "make test              the whole suite, in parallel (sshd tier: root; SLURM: .ci/slurm-up)"
	@echo "make fast              unit tests and the UI tests that need no sshd, in parallel"
	@echo "make snapshots-update  re-render the SVG snapshots after an intended UI change"
	@echo "make demo              the dashboard on the simulated fleet"
	@echo "N=4 (workers; 0 = serial), ARGS='-x -k NAME' (more pytest arguments)"

venv:
	python3 -m venv .venv
	$(PY) -m pip install -q -e '.[test]'

check:
	$(PY) -m ruff check $(SOURCES)
	$(PY) -m ruff format --check $(SOURCES)
	$(PY) -m mypy
	.venv/bin/lint-imports

test:
	$(PYTEST)

fast:
	$(PYTEST) -m "not sshd" tests/unit tests/ui

# serial: syrupy decides which snapshots are unused (and deletes them) per process
snapshots-update:
	$(PY) -m pytest -q -n 0 $(ARGS) $(SNAPSHOT_TESTS) --snapshot-update

demo:
	.venv/bin/gpu-tui demo
