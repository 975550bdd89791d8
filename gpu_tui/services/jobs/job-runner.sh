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
echo "$code" > exit_code.tmp && mv exit_code.tmp exit_code
# the end is recorded: now tell the user (issue 15), detached, so nothing waits for the network
if [ -f "$state/notify/targets.json" ] && [ -f "$state/bin/notify-v1.sh" ]; then
  setsid -f sh "$state/bin/notify-v1.sh" "$state" job_end "$d" < /dev/null > /dev/null 2>&1
fi
