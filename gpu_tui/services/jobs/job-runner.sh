#!/bin/sh
# gpu-tui job runner, version 2. Shipped by gpu-tui to <state_dir>/bin/job-runner-v2.sh and
# started as:  setsid -f nohup sh job-runner-v2.sh JOBDIR </dev/null >/dev/null 2>&1
# It runs JOBDIR/command.sh in a session of its own (so a stop can signal the job's whole process
# group without reaching the runner), appends its output to JOBDIR/log, and records the exit code
# and times however the job ends: killed by a signal, it is 128+N, as the shell reports it.
# Nothing here is started with `&`: a non-interactive shell starts background commands with
# SIGINT ignored, and a job that ignores SIGINT cannot save a checkpoint when asked to stop.
# command.sh writes its own pid (the process group to signal) to JOBDIR/pid.
d=$1
cd "$d" || exit 1
cat /proc/sys/kernel/random/boot_id > boot_id 2>/dev/null
echo $$ > runner_pid
date +%s > started_at
if command -v bash >/dev/null 2>&1; then shell=bash; else shell=sh; fi
# a failure the log shows while the job still runs (a NaN loss) is sent from here (issue 15)
state=$(cd ../.. && pwd -P)
if [ -f "$state/notify/targets.json" ] && [ -f "$state/bin/notify-v1.sh" ]; then
  setsid -f sh "$state/bin/notify-v1.sh" "$state" watch "$d" < /dev/null > /dev/null 2>&1
fi
# the run's series (`gpu-tui metrics`, issue 24): caught up while the job runs and once at its
# end, then the summariser exits by itself
if [ -f "$state/bin/series-v1.sh" ]; then
  setsid -f sh "$state/bin/series-v1.sh" "$state" watch "$d" < /dev/null > /dev/null 2>&1
fi
# --- OOM-killer evidence (issue 25): a job killed with nothing in its log was most often killed
# for memory. The memory cgroup counts its OOM kills (v2 memory.events, v1 memory.oom_control;
# v1 counts only the cgroup the victim is in, which is the runner's: the job inherits it); where
# no memory cgroup is readable, a readable kernel log's `Killed process` lines (machine-wide, so
# only then: another tenant's kill must not be the job's). Counted before and after the job; a
# rise writes JOBDIR/oom_kill.
# $1: where cgroups are mounted, $2: this process's cgroup file
oom_dir() {
  o_v2=$(sed -n 's/^0:://p' "$2" 2>/dev/null)
  o_v1=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p' "$2" 2>/dev/null)
  for o_c in "$1${o_v2%/}" "$1" "$1/memory${o_v1%/}" "$1/memory"; do
    if [ -r "$o_c/memory.events" ] || [ -r "$o_c/memory.oom_control" ]; then echo "$o_c"; return; fi
  done
}
# the OOM kills counted so far: the cgroup's in $1 (oom_dir's answer), else the kernel log's
oom_kills() {
  if [ -n "$1" ]; then
    o_n=$(cat "$1/memory.events" "$1/memory.oom_control" 2>/dev/null | sed -n 's/^oom_kill //p' | head -n 1)
  else
    o_n=$(dmesg 2>/dev/null | grep -c 'Killed process')
  fi
  echo "${o_n:-0}"
}
# did $2 count more kills than $1?
oom_more() {
  [ "$2" -gt "$1" ] 2>/dev/null
}
# "BYTES cgroup" (the tightest memory limit from the job's cgroup up to $2) or "BYTES host" (RAM)
oom_limit() {
  o_h=$(sed -n 's/^MemTotal: *\([0-9]*\) kB.*/\1/p' /proc/meminfo 2>/dev/null)
  o_h=$(( ${o_h:-0} * 1024 )); o_l=; o_c=$1
  while [ -n "$o_c" ]; do
    for o_f in "$o_c/memory.max" "$o_c/memory.limit_in_bytes"; do
      o_m=$(cat "$o_f" 2>/dev/null) || continue
      case $o_m in '' | max | *[!0-9]*) continue ;; esac
      if [ -z "$o_l" ] || [ "$o_m" -lt "$o_l" ]; then o_l=$o_m; fi
    done
    case $o_c in "$2" | "$2/memory") break ;; "$2"/*) o_c=${o_c%/*} ;; *) break ;; esac
  done
  if [ -n "$o_l" ] && { [ "$o_h" -eq 0 ] || [ "$o_l" -lt "$o_h" ]; }; then echo "$o_l cgroup"
  elif [ "$o_h" -gt 0 ]; then echo "$o_h host"
  fi
}
# --- end of the OOM-killer evidence
oom_at=$(oom_dir /sys/fs/cgroup /proc/self/cgroup)
oom_before=$(oom_kills "$oom_at")
session="gpu-tui-$(basename "$d")"
if [ -f want_tmux ] && command -v tmux >/dev/null 2>&1; then
  # `tmux attach -t gpu-tui-ID` shows the job live; the log gets the same output through tee.
  # tee hides the job's status, so command.sh records its own in exit_code.job (an EXIT trap);
  # a job killed by a signal leaves none, and counts as killed.
  # the pane's shell may read ~/.bashrc (bash does when it sees SSH_CLIENT), which may cd away:
  # name the job directory absolutely
  q=$(printf '%s' "$d" | sed "s/'/'\\\\''/g")
  tmux new-session -d -s "$session" -c "$d" "cd '$q' && echo \$\$ > pid && $shell ./command.sh 2>&1 | tee -a log"
  while tmux has-session -t "$session" 2>/dev/null; do sleep 1; done
  code=$(cat exit_code.job 2>/dev/null || echo 137)
else
  setsid "$shell" ./command.sh >> log 2>&1 < /dev/null
  code=$?
fi
date +%s > finished_at
# written before exit_code: a listing that sees the end sees its evidence
if [ "$code" != 0 ] && oom_more "$oom_before" "$(oom_kills "$oom_at")"; then
  oom_limit "$oom_at" /sys/fs/cgroup > oom_kill.tmp && mv oom_kill.tmp oom_kill
fi
# a full disk (issue 25): which filesystem, as df says it now: the path the error names (its
# nearest existing directory), else the job's working directory. `SIZE_KB FREE_KB USE% MOUNT`
if [ "$code" != 0 ] && tail -c 65536 log 2>/dev/null | grep -q -e 'No space left on device' -e 'PytorchStreamWriter failed writing'; then
  full=$(tail -c 65536 log | sed -n -e "s/.*No space left on device: '\(\/[^']*\)'.*/\1/p" \
    -e "s/.*error writing '\(\/[^']*\)': No space left on device.*/\1/p" | tail -n 1)
  [ -n "$full" ] || full=$(cat workdir 2>/dev/null)
  while [ -n "$full" ] && [ ! -e "$full" ]; do full=${full%/*}; done
  df -P -k "${full:-/}" 2>/dev/null | awk 'NR == 2 { m = $6; for (i = 7; i <= NF; i++) m = m " " $i; print $2, $4, $5, m }' > disk_full.tmp &&
    [ -s disk_full.tmp ] && mv disk_full.tmp disk_full
  rm -f disk_full.tmp
fi
echo "$code" > exit_code.tmp && mv exit_code.tmp exit_code
# the end is recorded: now tell the user (issue 15), detached, so nothing waits for the network
if [ -f "$state/notify/targets.json" ] && [ -f "$state/bin/notify-v1.sh" ]; then
  setsid -f sh "$state/bin/notify-v1.sh" "$state" job_end "$d" < /dev/null > /dev/null 2>&1
fi
