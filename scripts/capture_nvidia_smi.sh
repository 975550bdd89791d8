#!/usr/bin/env bash
# Capture what this machine's nvidia-smi really prints, for tests/data/nvidia-smi/.
# Usage: scripts/capture_nvidia_smi.sh OUTDIR [--load]
# --load runs a short PyTorch matmul loop meanwhile, so utilisation, power and compute apps are
# non-zero (needs python3 with torch and a CUDA device). Every file is the raw stdout+stderr of
# one command; `exit` files hold the exit status, because nvidia-smi's error paths matter as much.
set -u
out=${1:?usage: capture_nvidia_smi.sh OUTDIR [--load]}
mkdir -p "$out"
fields=index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit,fan.speed,mig.mode.current
apps=pid,process_name,used_gpu_memory,gpu_uuid

cap() {  # cap NAME SECONDS CMD...
  local name=$1 secs=$2; shift 2
  timeout "$secs" "$@" >"$out/$name.txt" 2>&1
  echo $? >"$out/$name.exit"
}

load_pid=
if [ "${2:-}" = "--load" ]; then
  python3 - >"$out/load.log" 2>&1 <<'EOF' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
hold = torch.empty(int(20e9), dtype=torch.uint8, device="cuda")  # ~20 GB so VRAM moves
end = time.time() + 40
while time.time() < end:
    for _ in range(50):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
print("load done")
EOF
  load_pid=$!
  sleep 12  # CUDA context up, clocks ramped
fi

cap version 10 nvidia-smi --version
cap table 10 nvidia-smi
cap list 10 nvidia-smi -L
cap query-nounits 10 nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits
cap query-units 10 nvidia-smi --query-gpu=$fields --format=csv,noheader
cap query-header 10 nvidia-smi --query-gpu=$fields --format=csv
cap query-legacy 10 nvidia-smi "--query-gpu=${fields%,mig.mode.current}" --format=csv,noheader,nounits
cap query-badfield 10 nvidia-smi --query-gpu=index,not.a.field --format=csv,noheader,nounits
cap apps 10 nvidia-smi --query-compute-apps=$apps --format=csv,noheader,nounits
cap apps-header 10 nvidia-smi --query-compute-apps=$apps --format=csv
cap lms-loop 4 nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 200
cap q 20 nvidia-smi -q
cap pmon 5 nvidia-smi pmon -c 2
cap dmon 5 nvidia-smi dmon -c 2
cap topo 10 nvidia-smi topo -m
cap clocks 10 nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,clocks.max.sm,pstate,ecc.errors.uncorrected.volatile.total,compute_mode,driver_version,pci.bus_id --format=csv
[ -n "$load_pid" ] && wait "$load_pid"
cap idle-after 10 nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits
{ uname -a; cat /proc/cpuinfo | grep -m1 'model name'; nproc; grep -E 'MemTotal|MemAvailable' /proc/meminfo; cat /proc/1/stat | cut -c1-120; df -Pk /; command -v nvidia-smi; id; } >"$out/host.txt" 2>&1
ls "$out"
