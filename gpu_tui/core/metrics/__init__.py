"""What an instance reports, parsed: nvidia-smi, host stats, the watch loop's records, per-GPU
history and sparklines, low utilisation."""
