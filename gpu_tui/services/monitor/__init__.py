"""Watching one instance: the connection, the nvidia-smi stream, the on-instance watch loop for
host stats, jobs and autostop."""
