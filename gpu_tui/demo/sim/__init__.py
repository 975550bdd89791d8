"""The simulated programs of a GPU instance, one implementation each, shared by `gpu-tui demo`
(called in-process by its SSH servers) and the sshd test tier (tests/fakes/* run them as
programs on a real sshd): nvidia-smi (nvsmi.py) and conda (conda*.py).

Stdlib only, relative imports only, nothing imported from gpu_tui: tests/sshd.py copies this
folder next to the fakes, where `python3 -IS` (no site-packages) and a non-root user run it.
"""
