"""Detached jobs on an instance: start, list, stop, the on-instance runner, the dashboard's job
watch, log tails, SLURM."""
