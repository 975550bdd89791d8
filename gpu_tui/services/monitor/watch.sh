#!/bin/sh
# gpu-tui watch loop, version 3. Shipped by gpu-tui to <state_dir>/bin/watch-v3.sh and run over
# SSH, one per dashboard connection, as:
#   sh watch-v3.sh STATE_DIR NONCE APPS_SECONDS DF_EVERY LOG_EVERY LOG_WINDOW HOLDERS_EVERY
# Every line the client sends on stdin is a tick: the loop answers it with one framed record of
# host stats (/proc, shell builtins), the job list (only when it changed; a running job's log end
# every LOG_EVERY ticks when the log grew, and once when the job ends), the autostop watchdog's
# state (when it changed) and the GPU compute apps (when they changed; from one long-lived
# `nvidia-smi --query-compute-apps -l APPS_SECONDS`), and which processes hold a GPU's device file
# (holders.sh, carried below: every HOLDERS_EVERY ticks or more, and when the compute apps
# changed; sent when that changed). Framing lines start with "@@w<NONCE> ".
# Per tick nothing is started but builtins: `df` runs every DF_EVERY ticks, `tail` only for a log
# that changed. The loop, its nvidia-smi and its stdin copier end when the client's channel
# closes (stdin EOF); nothing of it outlives the SSH session.
state=$1 n=$2 apps_s=${3:-5} df_every=${4:-60} log_every=${5:-6} window=${6:-65536} holders_every=${7:-5}
M="@@w$n"
V=3
fail() { printf '%s fail %s\n' "$M" "$*"; exit 3; }
cd "$state" 2>/dev/null || fail "cannot enter the state dir"
[ -r /proc/stat ] && [ -r /proc/uptime ] && [ -r /proc/meminfo ] || fail "no /proc"
run=$state/run/watch.$$
mkdir -p "$run" 2>/dev/null || fail "cannot write to the state dir"
mkfifo "$run/in" 2>/dev/null || { rm -rf "$run"; fail "mkfifo failed"; }
tck=$(getconf CLK_TCK 2>/dev/null) || tck=100
ncpu=0 btime=0
while read -r k v _; do case $k in cpu[0-9]*) ncpu=$((ncpu + 1)) ;; btime) btime=$v ;; esac; done < /proc/stat
boot=; read -r boot < /proc/sys/kernel/random/boot_id 2>/dev/null
p1=; read -r p1 < /proc/1/stat
apps_pid= copy_pid=
cleanup() {
  [ -n "$apps_pid" ] && kill "$apps_pid" 2>/dev/null
  [ -n "$copy_pid" ] && kill "$copy_pid" 2>/dev/null
  rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 0' INT TERM HUP PIPE
exec 3<>"$run/in" 4<&0 0</dev/null
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid --format=csv,noheader,nounits \
    -l "$apps_s" > "$run/in" 2>&1 3>&- 4<&- &
  apps_pid=$!
fi
# stdin (the client's ticks) into the same FIFO the loop reads; at EOF the loop is told to end
{ cat <&4 4<&-; [ -n "$apps_pid" ] && kill "$apps_pid" 2>/dev/null; echo .q; } > "$run/in" 2>/dev/null 3>&- &
copy_pid=$!
exec 4<&-
printf '%s hello %s %s\n' "$M" "$V" "$$"

# @@holders.sh@@
tick=0 prev_j= prev_a= prev_apps= prev_h= holders_next=0 running= apps_cur= apps_at= apps_batch= disk=
as_open= as_part= armed= failed= l1= l2= l3= l4= l5= l6= l7= l8=
NL='
'
as_line() {
  case ${1#* } in armed\ *) armed=$1 ;; failed*) failed=$1 ;; esac
  l1=$l2 l2=$l3 l3=$l4 l4=$l5 l5=$l6 l6=$l7 l7=$l8 l8=$1
}
while IFS= read -r line <&3; do
  case $line in
    .q) break ;;
    .*) ;;
    *)
      # a compute-apps row (or nvidia-smi's error text): rows within 1 s of each other are one batch
      read -r u _ < /proc/uptime; u=${u%.*}${u#*.}
      if [ -z "$apps_at" ] || [ $((u - apps_at)) -gt 100 ]; then apps_cur=$line; else apps_cur=$apps_cur$NL$line; fi
      apps_at=$u
      continue ;;
  esac
  tick=$((tick + 1))
  read -r u _ < /proc/uptime
  R="$M rec $tick$NL"
  read -r _ c < /proc/stat; R="${R}cpu $c${NL}ncpu $ncpu$NL"
  read -r l _ < /proc/loadavg; R="${R}load $l$NL"
  mt= ma=
  while read -r k v _; do
    case $k in MemTotal:) mt=$v ;; MemAvailable:) ma=$v; break ;; esac
  done < /proc/meminfo
  R="${R}mem MemTotal: $mt${NL}mem MemAvailable: $ma${NL}up $u $tck $p1$NL"
  if [ "$tick" -eq 1 ] || [ $((tick % df_every)) -eq 0 ]; then
    if df -Pk / > "$run/df" 2>/dev/null; then
      { read -r _; read -r _ t used _; } < "$run/df" && disk="disk $t $used"
    fi
    [ -n "$disk" ] && R="$R$disk$NL"
  fi
  # ---- jobs, in the format of services/jobs/runner.py's listing
  J= now_running= logs=
  for d in jobs/*/; do
    d=${d%/}
    [ -f "$d/job.json" ] || continue
    id=${d##*/}
    j=; IFS= read -r j < "$d/job.json"
    J="$J@@job $id${NL}json $j$NL"
    for f in pid exit_code started_at finished_at charset; do
      if [ -f "$d/$f" ]; then v=; read -r v < "$d/$f"; J="$J$f $v$NL"; fi
    done
    alive=0
    if [ ! -f "$d/exit_code" ] && [ -f "$d/runner_pid" ]; then
      rp=; read -r rp < "$d/runner_pid"; b=; [ -f "$d/boot_id" ] && read -r b < "$d/boot_id"
      if [ "$b" = "$boot" ] && kill -0 "$rp" 2>/dev/null; then
        st=; read -r _ _ st _ 2>/dev/null < "/proc/$rp/stat"
        [ "$st" = Z ] || alive=1
      fi
    elif [ ! -f "$d/exit_code" ] && [ ! -f "$d/runner_pid" ]; then alive=1
    fi
    J="${J}alive $alive$NL"
    [ -f "$d/stop_requested" ] && J="${J}stop_requested 1$NL"
    if [ $alive = 1 ]; then
      now_running="$now_running $id"
      if [ -f "$d/log" ] && { [ "$tick" -eq 1 ] || [ $((tick % log_every)) -eq 0 ]; } \
        && { [ ! -f "$run/s.$id" ] || [ "$d/log" -nt "$run/s.$id" ]; }; then
        logs="$logs $id"
      fi
    else
      case "$running " in *" $id "*) [ -f "$d/log" ] && logs="$logs $id" ;; esac
    fi
  done
  running=$now_running
  if [ "$J" != "$prev_j" ] || [ "$tick" -eq 1 ]; then R="$R$M jobs$NL$J"; prev_j=$J; fi
  # ---- autostop, in the format of services/autostop.py's status probe
  A=
  pid=; [ -f autostop.pid ] && read -r pid < autostop.pid
  case $pid in '' | *[!0-9]*) ;; *)
    A="pid $pid$NL"
    st=; read -r _ _ st _ 2>/dev/null < "/proc/$pid/stat"
    if [ -n "$st" ] && [ "$st" != Z ]; then
      cl=; IFS= read -r cl 2>/dev/null < "/proc/$pid/cmdline"
      case $cl in *autostop-v[0-9]*.sh*) A="${A}alive 1$NL" ;; esac
    fi ;;
  esac
  if [ -f autostop.log ]; then
    if [ -z "$as_open" ] || ! [ autostop.log -ef /proc/self/fd/6 ]; then
      exec 6< autostop.log; as_open=1 as_part= armed= failed= l1= l2= l3= l4= l5= l6= l7= l8=
    fi
    while :; do
      al=; IFS= read -r al <&6 || { as_part=$as_part$al; break; }
      as_line "$as_part$al"; as_part=
    done
    [ -n "$armed" ] && A="$A@armed $armed$NL"
    [ -n "$failed" ] && A="$A@failed $failed$NL"
    for al in "$l1" "$l2" "$l3" "$l4" "$l5" "$l6" "$l7" "$l8"; do [ -n "$al" ] && A="$A@line $al$NL"; done
  fi
  if [ "$A" != "$prev_a" ] || [ "$tick" -eq 1 ]; then R="$R$M autostop${NL}now $((btime + ${u%.*}))$NL$A"; prev_a=$A; fi
  # ---- compute apps: the last batch once it settled (0.5 s), none after two quiet periods
  if [ -n "$apps_at" ]; then
    u2=${u%.*}${u#*.}
    if [ $((u2 - apps_at)) -gt $((apps_s * 200 + 100)) ]; then apps_batch=
    elif [ $((u2 - apps_at)) -ge 50 ]; then apps_batch=$apps_cur
    fi
  fi
  scan=
  if [ "$apps_batch" != "$prev_apps" ] || [ "$tick" -eq 1 ]; then
    R="$R$M apps$NL"; [ -n "$apps_batch" ] && R="$R$apps_batch$NL"; prev_apps=$apps_batch; scan=1
  fi
  # ---- who holds each GPU's device file: a scan of /proc/*/fd, so not every tick. It costs about
  # 0.2 ms of CPU per process: every HOLDERS_EVERY ticks, and more rarely on a box of hundreds
  # of processes (a tick per 20 of them), so it stays near 0.2 % of a core; at once when the
  # compute apps changed.
  if [ -n "$scan" ] || [ "$tick" -ge "$holders_next" ]; then
    gpu_holders .
    if [ "$GH" != "$prev_h" ] || [ "$tick" -eq 1 ]; then R="$R$M holders$NL$GH"; prev_h=$GH; fi
    set -- /proc/[0-9]*
    holders_next=$(($# / 20)); [ "$holders_next" -lt "$holders_every" ] && holders_next=$holders_every
    holders_next=$((tick + holders_next))
  fi
  if [ -z "$logs" ]; then
    printf '%s%s end\n' "$R" "$M" || exit 0
    continue
  fi
  printf '%s' "$R" || exit 0
  for id in $logs; do
    : > "$run/s.$id"
    printf '%s log %s\n' "$M" "$id"
    tail -c "$window" -- "jobs/$id/log" 2>/dev/null
    printf '\n%s endlog\n' "$M"
  done
  printf '%s end\n' "$M" || exit 0
done
