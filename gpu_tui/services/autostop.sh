#!/bin/sh
# gpu-tui autostop watchdog, version 1. Shipped by gpu-tui to <state_dir>/bin/autostop-v1.sh and
# started detached from the SSH session (setsid -f nohup, stdin /dev/null, output to the log), so
# it keeps watching with the laptop closed:
#   sh autostop-v1.sh STATE_DIR IDLE_S CHECK_S GPU_PCT CPU_CENTICORES BEFORE_MAX_S AFTER_JOB
# STATE_DIR is absolute, AFTER_JOB a job id or "-", the rest whole numbers.
#
# Every CHECK_S seconds (sooner when the idle time is nearly up) it decides "busy" or "idle":
#   idle = no gpu-tui job running (with AFTER_JOB: that job has ended; other jobs do not count),
#          every GPU's utilization.gpu under GPU_PCT (memory merely held does not count; AMD
#          GPUs: amdgpu's gpu_busy_percent), and
#          less than CPU_CENTICORES/100 cores of CPU time used over the check interval.
# Anything it cannot read counts as busy. Once idle has lasted IDLE_S seconds it runs
# STATE_DIR/autostop.before.sh (when not empty; at most BEFORE_MAX_S), then
# STATE_DIR/autostop.shutdown.sh. Each decision is one line in STATE_DIR/autostop.log:
#   2026-11-30T10:00:00Z idle 120/900s gpu=0,3 cpu=0.05 jobs=0
# Its pid is in STATE_DIR/autostop.pid; it leads its own process group, and gpu-tui stops it
# with SIGTERM to that group. Nothing here is started with `&`.

state=$1 idle=$2 every=$3 gpu_max=$4 cpu_max=$5 before_max=$6 after_job=$7
[ "$after_job" = - ] && after_job=
log="$state/autostop.log"
pidf="$state/autostop.pid"
LOG_MAX=262144
PATH="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export PATH
me=$$
cd / || exit 1

stamp() { date -u +%Y-%m-%dT%H:%M:%SZ; }
say() { printf '%s %s\n' "$(stamp)" "$*" >> "$log"; }

finish() {
  p=
  [ -f "$pidf" ] && read -r p < "$pidf"
  [ "$p" = "$me" ] && rm -f "$pidf"
}
trap 'say "stopped (signal)"; finish; exit 0' TERM INT

# the log keeps its last 64 KiB (and the armed line) once it passes LOG_MAX bytes
rotate() {
  size=$(wc -c < "$log" 2>/dev/null | tr -d ' ')
  [ "${size:-0}" -gt "$LOG_MAX" ] || return 0
  { printf '%s\n' "$armed_line"; tail -c 65536 "$log" | sed 1d; } > "$log.tmp" && mv -f "$log.tmp" "$log"
}

# monotonic clock in centiseconds (/proc/uptime; the wall clock only when that is unreadable)
now_cs() {
  up=
  read -r up _ 2> /dev/null < /proc/uptime
  case $up in
    *[0-9].[0-9][0-9]) echo $(( ${up%.*} * 100 + 1${up#*.} - 100 )) ;;
    *) echo $(( $(date +%s) * 100 )) ;;
  esac
}

# ---- CPU: the container's own cgroup counter where there is one (in a container /proc/stat is
# the whole host's, other tenants included), else /proc/stat
cpu_src=none
if [ -r /sys/fs/cgroup/cpu.stat ] && grep -q '^usage_usec ' /sys/fs/cgroup/cpu.stat 2>/dev/null; then
  cpu_src=cgroup2
elif [ -r /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
  cpu_src=cgroup1 cg1=/sys/fs/cgroup/cpuacct/cpuacct.usage
elif [ -r /sys/fs/cgroup/cpu,cpuacct/cpuacct.usage ]; then
  cpu_src=cgroup1 cg1=/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage
elif [ -r /proc/stat ]; then
  cpu_src=procstat
  ncpu=$(grep -c '^cpu[0-9]' /proc/stat)
fi

# sets used (µs, ns or jiffies by source) and total (jiffies, /proc/stat only); 1 when unreadable
cpu_read() {
  used='' total=''
  case $cpu_src in
    cgroup2) used=$(sed -n 's/^usage_usec //p' /sys/fs/cgroup/cpu.stat 2>/dev/null) ;;
    cgroup1) read -r used 2> /dev/null < "$cg1" ;;
    procstat)
      read -r _ u n s i w q sq st _ 2> /dev/null < /proc/stat || return 1
      used=$((u + n + s + q + sq)) total=$((u + n + s + i + w + q + sq + st)) ;;
  esac
  case $used in '' | *[!0-9]*) return 1 ;; esac
}

# from two samples a_*, b_*: sets cc (centi-cores used over the interval), or returns 1
cpu_usage() {
  [ -n "$a_used" ] && [ -n "$b_used" ] || return 1
  dcs=$((b_cs - a_cs))
  [ "$dcs" -gt 0 ] || return 1
  case $cpu_src in
    cgroup2) cc=$(( (b_used - a_used) / (dcs * 100) )) ;;
    cgroup1) cc=$(( (b_used - a_used) / (dcs * 100000) )) ;;
    procstat)
      dt=$((b_total - a_total))
      [ "$dt" -gt 0 ] || return 1
      cc=$(( 100 * ncpu * (b_used - a_used) / dt )) ;;
    *) return 1 ;;
  esac
  [ "$cc" -ge 0 ] || return 1
}

# `timeout` bounds nvidia-smi (a wedged driver can hang it) and the before command, where it works
limit='' kill_after=''
if timeout 5 true > /dev/null 2>&1; then limit="timeout 30"; fi
if timeout -k 1 5 true > /dev/null 2>&1; then kill_after=1; fi

cores() { printf '%d.%02d' $(($1 / 100)) $(($1 % 100)); }

# ---- GPUs: sets gpu (for the log) and gpu_why (empty when every GPU is idle)
gpu_check() {
  gpu='' gpu_why=''
  if command -v nvidia-smi > /dev/null 2>&1; then
    # shellcheck disable=SC2086 # $limit is empty or `timeout 30`, word-split on purpose
    out=$($limit nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>&1)
    rc=$?
  else
    rc=127
  fi
  if [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then
    # no runnable nvidia-smi: AMD GPUs say how busy they are in sysfs (amdgpu's
    # gpu_busy_percent: no process to start), else a CPU-only instance, unless NVIDIA devices
    # are there after all
    amd=
    for f in "${GPU_TUI_SYSROOT:-}"/sys/class/drm/card[0-9]*/device/gpu_busy_percent; do
      [ -r "$f" ] || continue
      v=; read -r v < "$f" 2> /dev/null
      amd="$amd${v:-?}
"
    done
    if [ -n "$amd" ]; then
      out=$amd rc=0
    elif ls /dev/nvidia[0-9]* > /dev/null 2>&1; then
      gpu=error gpu_why="GPU devices present but nvidia-smi cannot run"
    else
      gpu=none
    fi
    [ -n "$amd" ] || return
  fi
  if [ "$rc" -ne 0 ]; then
    first=$(printf '%s\n' "$out" | sed -n '/./{p;q;}' | cut -c1-160)
    gpu=error gpu_why="nvidia-smi failed (exit $rc): $first"
    return
  fi
  k=0
  while IFS=' ' read -r v _; do
    [ -n "$v" ] || continue
    case $v in
      *[!0-9]*)
        gpu="${gpu:+$gpu,}?"
        [ -n "$gpu_why" ] || gpu_why="GPU $k utilisation not reported ($v)" ;;
      *)
        gpu="${gpu:+$gpu,}$v"
        if [ -z "$gpu_why" ] && [ "$v" -ge "$gpu_max" ]; then gpu_why="GPU $k at $v%"; fi ;;
    esac
    k=$((k + 1))
  done <<EOF
$out
EOF
  if [ "$k" -eq 0 ]; then gpu=error gpu_why="nvidia-smi listed no GPU"; fi
}

# ---- jobs, read as `gpu-tui jobs` reads them: sets jobs (running ones that count)
job_running() {
  [ -f "$1/exit_code" ] && return 1
  # a runner started a moment ago may not have written runner_pid yet: it counts as running
  [ -f "$1/runner_pid" ] || return 0
  rp=
  read -r rp < "$1/runner_pid"
  case $rp in '' | *[!0-9]*) return 0 ;; esac
  b=
  [ -f "$1/boot_id" ] && read -r b < "$1/boot_id"
  [ "$b" = "$boot" ] || return 1
  [ -r "/proc/$rp/stat" ] || return 1
  st=
  read -r _ _ st _ 2> /dev/null < "/proc/$rp/stat" || return 1
  # a killed runner can linger as a zombie where PID 1 does not reap (many containers)
  [ "$st" != Z ]
}

jobs_check() {
  jobs=0
  boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
  for d in "$state"/jobs/*/; do
    d=${d%/}
    [ -f "$d/job.json" ] || continue
    if [ -n "$after_job" ] && [ "${d##*/}" != "$after_job" ]; then continue; fi
    if job_running "$d"; then jobs=$((jobs + 1)); fi
  done
}

# ---- the user's notification targets (issue 15): detached, so the shutdown never waits on them
notify_on() { [ -f "$state/notify/targets.json" ] && [ -f "$state/bin/notify-v1.sh" ]; }
notify() {
  notify_on || return 0
  say "notify $1"
  # autostop.sent.WHAT appears once the sender has finished: `done` waits for `about` (two
  # detached senders started a moment apart could otherwise reach the phone the other way round)
  setsid -f sh -c 'sh "$1" "$2" autostop "$3" "$4" "$5"; : > "$2/autostop.sent.$3"' _ \
    "$state/bin/notify-v1.sh" "$state" "$1" "autostop:$me:$fired:$1" "${2:-}" < /dev/null > /dev/null 2>&1
}
# wait (at most 15 s) for the sender of $1 to finish
sent() {
  notify_on || return 0
  i=0
  while [ ! -f "$state/autostop.sent.$1" ] && [ "$i" -lt 75 ]; do sleep 0.2; i=$((i + 1)); done
}

# ---- the end: the user's command, then the provider's shutdown
fire() {
  fired=$(date +%s)
  rm -f "$state"/autostop.sent.*
  notify about
  if [ -s "$state/autostop.before.sh" ]; then
    say "before running (at most ${before_max}s)"
    if [ -n "$kill_after" ]; then
      timeout -k 10 "$before_max" sh "$state/autostop.before.sh" < /dev/null >> "$log" 2>&1
    elif [ -n "$limit" ]; then
      timeout "$before_max" sh "$state/autostop.before.sh" < /dev/null >> "$log" 2>&1
    else
      sh "$state/autostop.before.sh" < /dev/null >> "$log" 2>&1
    fi
    rc=$?
    if [ "$rc" -eq 124 ]; then say "before timed out after ${before_max}s"; else say "before exit $rc"; fi
  fi
  say "shutdown $(sed -n 1p "$state/autostop.shutdown.sh")"
  sh "$state/autostop.shutdown.sh" < /dev/null >> "$log" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then
    say "failed: the shutdown command exited $rc; watching again"
    notify failed "the shutdown command exited $rc"
    return
  fi
  say "shutdown exit 0, waiting for the power-off"
  sent about
  notify done
  sleep 120
  say "failed: still running 120s after the shutdown command; watching again"
  notify failed "still running 120s after the shutdown command"
}

# ---- start
echo "$me" > "$pidf.$me" && mv -f "$pidf.$me" "$pidf" || exit 1
before=no
[ -s "$state/autostop.before.sh" ] && before=yes
armed_line="$(stamp) armed pid=$me idle=${idle}s every=${every}s gpu<${gpu_max}% cpu<$(cores "$cpu_max") after_job=${after_job:--} before=$before cpu_source=$cpu_src shutdown=$(sed -n 1p "$state/autostop.shutdown.sh")"
printf '%s\n' "$armed_line" >> "$log"

idle_since=
window=$every
while :; do
  a_used='' b_used=''
  cpu_read && a_used=$used a_total=$total
  a_cs=$(now_cs)
  sleep "$window"
  cpu_read && b_used=$used b_total=$total
  b_cs=$(now_cs)
  if cpu_usage; then cpu=$(cores "$cc"); else cpu='?' cc=''; fi
  gpu_check
  jobs_check
  why=
  if [ "$jobs" -gt 0 ]; then
    if [ -n "$after_job" ]; then why="job $after_job running"; else why="$jobs gpu-tui job(s) running"; fi
  elif [ -n "$gpu_why" ]; then
    why=$gpu_why
  elif [ -z "$cc" ]; then
    why="CPU usage unreadable ($cpu_src)"
  elif [ "$cc" -ge "$cpu_max" ]; then
    why="CPU at $cpu cores"
  fi
  now=$((b_cs / 100))
  facts="gpu=$gpu cpu=$cpu jobs=$jobs"
  window=$every
  if [ -n "$why" ]; then
    idle_since=
    say "busy 0/${idle}s $facts why=$why"
  else
    [ -n "$idle_since" ] || idle_since=$now
    held=$((now - idle_since))
    if [ "$held" -ge "$idle" ]; then
      say "firing $held/${idle}s $facts"
      fire
      idle_since=
    else
      say "idle $held/${idle}s $facts"
      left=$((idle - held))
      [ "$left" -lt "$window" ] && window=$left
    fi
  fi
  rotate
done
