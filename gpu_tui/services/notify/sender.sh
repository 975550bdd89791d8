#!/bin/sh
# gpu-tui notification sender, version 1. Shipped by gpu-tui to <state_dir>/bin/notify-v1.sh;
# the job runner and the autostop watchdog start it detached (setsid -f), after they have
# recorded what happened, so it never delays a job's exit code or a shutdown:
#   sh notify-v1.sh STATE job_end JOBDIR
#   sh notify-v1.sh STATE watch JOBDIR        (python3 only: a failure seen while the job runs)
#   sh notify-v1.sh STATE autostop about|done|failed EVENT_ID [DETAIL]
#   sh notify-v1.sh STATE test
# With python3 >= 3.6 it hands over to bin/notify-v1.py (everything, the log's failure rules
# included). Without one it sends the same requests with curl, else GNU wget, from the files the
# laptop prepared under STATE/notify/sh/ (mode 600): a job's failure is then its exit code.
# Secrets never reach a command line: curl reads its URL and headers from a config file (-K),
# wget from a wgetrc (WGETRC) and an input file (-i), bodies come from files, and a signature's
# HMAC-SHA256 is built from padded keys through `openssl dgst` on stdin.
state=$1 event=$2
[ -f "$state/notify/targets.json" ] || exit 0
umask 077
shift 2
# the watcher is wanted only for job_failure: skip starting python3 for nothing
if [ "$event" = watch ] && ! grep -qx job_failure "$state/notify/sh/events" 2> /dev/null; then exit 0; fi
# `-V` answers without starting the interpreter's site machinery (half the cost of `-c`)
for c in python3 python; do
  command -v "$c" > /dev/null 2>&1 || continue
  case $("$c" -V 2>&1) in
    'Python 3.'[6-9]* | 'Python 3.'[1-9][0-9]*) exec "$c" -S "$state/bin/notify-v1.py" "$state" "$event" "$@" ;;
  esac
done

sh_dir=$state/notify/sh
[ -d "$sh_dir" ] || exit 0
if command -v curl > /dev/null 2>&1; then via=curl
elif command -v wget > /dev/null 2>&1 && wget --version 2> /dev/null | grep -q 'GNU Wget'; then via=wget
else via=none
fi
tmp=$(mktemp -d "$state/notify/.send.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
conf() { sed -n "$1p" "$sh_dir/settings"; }
timeout=$(conf 1) attempts=$(conf 2) budget=$(conf 3) rate=$(conf 4) currency=$(conf 5)
deadline=$(( $(date +%s) + budget ))
wants() { grep -qx "$1" "$sh_dir/events"; }
msg() { sed -n 1p "$sh_dir/msg.$1"; }
note() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >> "$state/notify/sender.log"; }
# a value put into a sed replacement
sedq() { printf '%s' "$1" | sed 's/[\\/&]/\\&/g'; }
fill() { # template, then key value pairs
  t=$1; shift
  while [ $# -ge 2 ]; do t=$(printf '%s' "$t" | sed "s/{$1}/$(sedq "$2")/g"); shift 2; done
  printf '%s' "$t"
}
# a JSON string of stdin (control characters dropped, lines joined by \n)
json_str() {
  printf '"'
  tr -d '\000-\010\013-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' |
    awk '{ printf "%s%s", (NR > 1 ? "\\n" : ""), $0 }'
  printf '"'
}
# core/units.format_duration_s's spelling
duration() {
  s=$1 m=$(($1 / 60)); h=$((m / 60)); d=$((h / 24))
  if [ $d -gt 0 ]; then printf '%dd%02dh' $d $((h % 24))
  elif [ $h -gt 0 ]; then printf '%dh%02dm' $h $((m % 60))
  elif [ $m -gt 0 ]; then printf '%dm%02ds' $m $((s % 60))
  else printf '%ds' "$s"; fi
}

# HMAC-SHA256(key file, message file), base64: the padded keys go to openssl on stdin
hmac_b64() {
  command -v openssl > /dev/null 2>&1 || return 1
  if [ "$(wc -c < "$1")" -gt 64 ]; then openssl dgst -sha256 -binary < "$1" > "$tmp/k"; else cat "$1" > "$tmp/k"; fi
  : > "$tmp/ip"; : > "$tmp/op"; n=0
  for b in $(od -An -v -tu1 "$tmp/k"); do
    printf "\\$(printf %o $((b ^ 54)))" >> "$tmp/ip"; printf "\\$(printf %o $((b ^ 92)))" >> "$tmp/op"; n=$((n + 1))
  done
  while [ $n -lt 64 ]; do printf '\066' >> "$tmp/ip"; printf '\134' >> "$tmp/op"; n=$((n + 1)); done
  cat "$tmp/ip" "$2" | openssl dgst -sha256 -binary > "$tmp/inner" || return 1
  cat "$tmp/op" "$tmp/inner" | openssl dgst -sha256 -binary | openssl base64 -A
}

# sets ts and sig for target $1 (DingTalk: ms, the secret signs "ts\nsecret"; Feishu: s, the key
# "ts\nsecret" signs nothing)
sign() {
  kind=$(sed -n 2p "$1.meta")
  if [ "$kind" = dingtalk ]; then
    ts="$(date +%s)000"
    { printf '%s\n' "$ts"; cat "$1.key"; } > "$tmp/m"
    sig=$(hmac_b64 "$1.key" "$tmp/m") || return 1
    sig=$(printf '%s' "$sig" | sed -e 's/+/%2B/g' -e 's/\//%2F/g' -e 's/=/%3D/g')
  else
    ts=$(date +%s)
    { printf '%s\n' "$ts"; cat "$1.key"; } > "$tmp/fk"; : > "$tmp/m"
    sig=$(hmac_b64 "$tmp/fk" "$tmp/m") || return 1
  fi
}

body_of() { # template file -> the request body
  while IFS= read -r l; do
    case $l in
      L*) printf '%s' "${l#L}" ;;
      'M @TITLE@') printf '%s' "$title" | json_str ;;
      'M @BODY@') printf '%s' "${body:-$title}" | json_str ;;
      'M @TEXT@') { printf '%s' "$title"; [ -n "$body" ] && printf '\n%s' "$body"; } | json_str ;;
      'M @TS@') printf '"%s"' "$ts" ;;
      'M @SIGN@') printf '"%s"' "$sig" ;;
    esac
  done < "$1"
}

# one attempt at target $1 (its files' stem); sets err (empty when accepted)
attempt() {
  t=$1 err='' ts='' sig=''
  if [ -s "$t.key" ]; then sign "$t" || { err="signing needs python3 or openssl"; return; }; fi
  body_of "$t.body" > "$tmp/body"
  left=$((deadline - $(date +%s)))
  [ $left -lt "$timeout" ] && lim=$left || lim=$timeout
  : > "$tmp/reply"
  if [ $via = curl ]; then
    sed -e "s/@TS@/$ts/g" -e "s/@SIGN@/$(sedq "$sig")/g" "$t.curl" > "$tmp/cfg"
    printf 'max-time = %s\nconnect-timeout = %s\ndata-binary = "@%s"\noutput = "%s"\n' \
      "$lim" "$lim" "$tmp/body" "$tmp/reply" >> "$tmp/cfg"
    code=$(curl -K "$tmp/cfg" 2> "$tmp/err") || { err="curl exit $?: $(head -c 160 "$tmp/err")"; return; }
  else
    sed -e "s/@TS@/$ts/g" -e "s/@SIGN@/$(sedq "$sig")/g" "$t.url" > "$tmp/url"
    WGETRC=$t.wgetrc wget -q -S --content-on-error -t 1 -T "$lim" -O "$tmp/reply" -i "$tmp/url" \
      --post-file="$tmp/body" 2> "$tmp/err"
    rc=$?
    code=$(sed -n 's/^ *HTTP\/[0-9.]* \([0-9][0-9][0-9]\).*/\1/p' "$tmp/err" | tail -n 1)
    [ -n "$code" ] || { err="wget exit $rc"; return; }
  fi
  case $code in
    2??) ;;
    *) err="HTTP $code: $(tr -s '\n\t ' '   ' < "$tmp/reply" | head -c 160)"; return ;;
  esac
  ok=$(sed -n 3p "$t.meta")
  [ -z "$ok" ] || tr -d '\n' < "$tmp/reply" | grep -Eq "$ok" ||
    err="refused: $(tr -s '\n\t ' '   ' < "$tmp/reply" | head -c 160)"
}

send_one() { # stem -> a JSON result object on stdout
  n=0 err="no time left"
  while [ $n -lt "$attempts" ] && [ $(($(date +%s) + 1)) -lt "$deadline" ]; do
    n=$((n + 1))
    echo $n > "$tmp.n"  # for deliver, should the budget's wall stop this target mid-attempt
    attempt "$1"
    [ -z "$err" ] && break
    case $err in 'HTTP 4'*) case $err in 'HTTP 429'*) ;; *) break ;; esac ;; esac
    sleep $n
  done
  [ -z "$err" ] && okv=true errv=null || { okv=false errv=$(printf '%s' "$err" | json_str); }
  [ -n "$err" ] && note "$event_id $(sed -n 1p "$1.meta"): $err ($n attempts)"
  printf '{"target": %s, "ok": %s, "error": %s, "attempts": %d}' \
    "$(sed -n 1p "$1.meta" | json_str)" "$okv" "$errv" "$n"
}

deliver() { # sends title/body to every target in parallel; appends the outbox line
  i=0 pids=''
  for m in "$sh_dir"/t*.meta; do
    [ -f "$m" ] || continue
    # each target has the events it asked for; a test goes to every one
    if [ "$event" != test ] && [ -f "${m%.meta}.events" ] && ! grep -qx "$event" "${m%.meta}.events"; then
      continue
    fi
    if [ $via = none ]; then
      printf '{"target": %s, "ok": false, "error": "no python3, curl or wget on the instance", "attempts": 0}' \
        "$(sed -n 1p "$m" | json_str)" > "$tmp/r$i"
    else
      (tmp="$tmp/w$i"; mkdir -p "$tmp" && send_one "${m%.meta}" > "$tmp.r") &
      pids="$pids $!"
    fi
    printf '%s\n' "$m" > "$tmp/m$i"
    i=$((i + 1))
  done
  if [ -n "$pids" ]; then
    # the budget is a wall: on a loaded machine the forks and a last attempt's timeout ran
    # seconds past it; what is still sending then is stopped, and says so
    left=$((deadline - $(date +%s) + 1)); [ $left -gt 0 ] || left=0
    (trap 'kill $sp 2> /dev/null; exit 0' TERM; sleep $left & sp=$!; wait $sp; kill $pids 2> /dev/null) &
    dog=$!
    wait $pids
    kill $dog 2> /dev/null
  fi
  results='' j=0 all=0
  while [ $j -lt $i ]; do
    r=$(cat "$tmp/w$j.r" 2> /dev/null || cat "$tmp/r$j" 2> /dev/null)
    case $r in *'}') ;; *)  # stopped by the wall before it could answer
      n=$(cat "$tmp/w$j.n" 2> /dev/null)
      r=$(printf '{"target": %s, "ok": false, "error": "no time left", "attempts": %d}' \
        "$(sed -n 1p "$(cat "$tmp/m$j")" | json_str)" "${n:-0}")
      note "$event_id $(sed -n 1p "$(cat "$tmp/m$j")"): stopped at the budget's end"
      ;;
    esac
    case $r in *'"ok": true'*) ;; *) all=3 ;; esac
    results="${results:+$results, }$r"; j=$((j + 1))
  done
  [ "$event" = test ] && printf '%s\n' "$results" | sed 's/}, {/}\n{/g'
  job_json=null; [ -n "$job" ] && job_json=$(printf '%s' "$job" | json_str)
  printf '{"id": %s, "event": "%s", "instance": %s, "job": %s, "title": %s, "body": %s, "at": %s, "targets": [%s], "via": "%s"}\n' \
    "$(printf '%s' "$event_id" | json_str)" "$event" "$(msg instance | json_str)" "$job_json" \
    "$(printf '%s' "$title" | json_str)" "$(printf '%s' "$body" | json_str)" "$(date +%s)" "$results" "$via" \
    >> "$state/notify/outbox.jsonl"
  return $all
}

job='' body=''
case $event in
  job_end)
    wants job_end || exit 0
    d=$1
    [ -f "$d/exit_code" ] || exit 0
    # once per job, whoever asks (O_EXCL through noclobber)
    (set -C; : > "$d/notified") 2> /dev/null || exit 0
    id=${d%/}; id=${id##*/}
    read -r code < "$d/exit_code"
    job=$(sed -n 's/.*"name": *"\([A-Za-z0-9._-]*\)".*/\1/p' "$d/job.json" | head -n 1)
    [ -n "$job" ] || job=$id
    event_id="job_end:$id"
    s0=; s1=
    [ -f "$d/started_at" ] && read -r s0 < "$d/started_at"
    [ -f "$d/finished_at" ] && read -r s1 < "$d/finished_at"
    if [ -f "$d/stop_requested" ]; then kind=stopped reason=
    elif [ "$code" = 0 ]; then kind=succeeded reason=
    elif [ "$code" = 137 ] || [ "$code" = -9 ]; then kind=failed reason=$(msg killed)
    else kind=failed reason="exit code $code"
    fi
    # the OOM killer's evidence the runner kept wins over a bare killed or exit code (as `jobs`:
    # core/trainlog/failures.with_oom_evidence)
    oom=; [ $kind = failed ] && [ -f "$d/oom_kill" ] && read -r oom _ < "$d/oom_kill"
    case $oom in
      '' | *[!0-9]*) oom= ;;
      *) gib=$(awk -v b="$oom" 'BEGIN { g = sprintf("%.1f", b / 1073741824); sub(/\.0$/, "", g); print g }')
         reason="killed (out of host memory: OOM killer, limit $gib GiB)" ;;
    esac
    title=$(fill "$(msg "job_end.$kind")" job "$job" reason "$reason" code "$code")
    case "$s0$s1" in *[!0-9]*) took= ;; '') took= ;; *) took=$((s1 - s0)) ;; esac
    parts=
    if [ -n "$took" ]; then
      parts=$(fill "$(msg line.duration)" duration "$(duration "$took")")
      if [ "$(awk -v r="$rate" 'BEGIN { print (r > 0) }')" = 1 ]; then
        cost=$(awk -v r="$rate" -v s="$took" 'BEGIN { printf "%.2f", s / 3600 * r }')
        parts="$parts · $(fill "$(msg line.cost)" cost "$currency$cost")"
      fi
    fi
    [ $kind = failed ] && parts="${parts:+$parts · }$(fill "$(msg line.exit)" code "$code")"
    body=$parts
    if [ $kind = failed ]; then  # what to do, on a line of its own (core/hints)
      if [ -n "$oom" ]; then hint=$(msg hint.oom)
      elif [ "$reason" = "$(msg killed)" ]; then hint=$(msg hint.killed); else hint=$(msg hint.exit); fi
      [ -n "$hint" ] && body="$body
$hint"
    fi
    ;;
  autostop)
    wants autostop || exit 0
    case $1 in about | done | failed) ;; *) exit 2 ;; esac
    event_id=$2
    title=$(fill "$(msg "autostop.$1")" error "${3:-}")
    ;;
  watch) exit 0 ;;  # reading the log's failures needs python3
  test)
    event_id="test:$(date +%s)000"
    title=$(msg test) body=$(msg test.body)
    ;;
  *) echo "unknown event $event" >&2; exit 2 ;;
esac
deliver
