"""A live, fork-free fake `nvidia-smi` for the benchmarks (and any test that wants one).

The static fakes (benchmarks/bench_metrics.py's CHEAP_FAKE, bench_watch.py's FORKLESS_FAKE)
print one baked-in frame every tick, so a client's caches never miss and nothing on screen
changes. A GPU under a training load never prints the same frame twice; this fake's frames move
as such a GPU's do:

- utilization.gpu random-walks over 0-100 (a step of 1-8 points every tick, never 0, reflected
  at the ends), per GPU;
- power.draw follows it (idle 70 W up to power.limit) with +-15 W of noise;
- temperature.gpu drifts a degree toward 30 + u/2 now and then (one tick in four);
- memory.used moves by 100-500 MiB one tick in eight, within memory.total;
- clocks.sm / clocks.mem / pstate / utilization.memory / memory.free follow the load, for a
  client that asks for them (gpu-tui does not);
- the compute-apps list (the one-shot query) changes every minute, at a per-instance phase.

Its queries: `--query-gpu=F1,F2,...` with any of the fields above (in the order asked, as the
real one does), `--format=csv,noheader,nounits` (or `csv,noheader` for `index` alone), one-shot
or looped (`-lms MS`, `-l S`); `--query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid`
one-shot. Anything else is handed to `nvidia-smi-full` next to it (the tests' full fake).

Fork-free: bash builtins only. The loop keeps an absolute schedule on `$EPOCHREALTIME` and waits
with `read -t` on a FIFO nobody writes, so a tick starts no process (only the FIFO's `mkfifo` and
`rm`, once per run). The random numbers are a 31-bit LCG in bash arithmetic (no `$RANDOM`, whose
generator changed between bash versions), so a seed gives the same walk on any bash >= 5.0; the
seed is baked into each instance's copy (`@SEED@`). A one-shot `--query-gpu` mixes the current
second into the seed, so consecutive one-shots differ too.

`script(frame, apps_fields, gpu_count)` returns the script's text with `@SEED@` still in it;
`with_seed(text, seed)` fills it in. `frame` is a rendered frame in QUERY_FIELDS order (the
static identity of each GPU: index, uuid, name, memory.total, power.limit, fan, MIG mode, and its
starting memory.used and temperature come from it).
"""

from __future__ import annotations

from gpu_tui.core.metrics.nvsmi import QUERY_FIELDS

__all__ = ["GPU_FIELDS", "script", "with_seed"]

GPU_FIELDS: tuple[str, ...] = QUERY_FIELDS
"""The order of a rendered frame's columns (gpu_tui.core.metrics.nvsmi.QUERY_FIELDS)."""

_TEMPLATE = r"""#!/bin/bash
# Live fork-free fake nvidia-smi, written by tests/livefake.py: every tick moves (utilization
# random walk, power follows it, temperature and memory drift); the compute-apps list changes
# every minute. bash builtins only; deterministic per SEED.
SEED=@SEED@
NG=__NG__
UUID=(__UUID__)
NAME=(__NAME__)
MTOT=(__MTOT__)
PLIM=(__PLIM__)
FAN=(__FAN__)
MIG=(__MIG__)
M=(__MUSED__)
T=(__TEMP__)
APPS=(python3 torchrun /usr/bin/python3 python ./train.py)
full=${0%/*}/nvidia-smi-full
kind= ms= want= fields= fmt=
for a do
    case $want in ms) ms=$a; want=; continue ;; s) ms=$((a * 1000)); want=; continue ;; esac
    case $a in
        --query-gpu=*) kind=gpu; fields=${a#--query-gpu=} ;;
        '--query-compute-apps=__APPS_FIELDS__') kind=apps ;;
        --format=csv,noheader,nounits) fmt=nounits ;;
        --format=csv,noheader) fmt=units ;;
        -lms) want=ms ;;
        -l) want=s ;;
        *) exec "$full" "$@" ;;
    esac
done
[ -n "$kind" ] && [ -n "$fmt" ] || exec "$full" "$@"
IFS=, read -r -a F <<< "$fields"
for f in "${F[@]}"; do
    case $f in
        index) ;;
        uuid|name|utilization.gpu|utilization.memory|memory.used|memory.total|memory.free) ;;
        temperature.gpu|power.draw|power.limit|fan.speed|mig.mode.current) ;;
        clocks.sm|clocks.current.sm|clocks.mem|clocks.current.memory|pstate) ;;
        *) exec "$full" "$@" ;;
    esac
done
[ "$fmt" = units ] && [ "$fields" != index ] && exec "$full" "$@"
r=$SEED
# R = a number in 0 .. $1-1 (an LCG; its high bits)
rnd() { r=$(( (r * 1103515245 + 12345) & 2147483647 )); R=$(( (r >> 12) % $1 )); }

apps() {
    printf -v now '%(%s)T' -1
    r=$(( SEED * 7919 + (now + SEED % 60) / 60 ))
    rnd 1000; rnd 1000
    local i k c pid nm out=
    for ((i = 0; i < NG; i++)); do
        rnd 3; c=$R
        for ((k = 0; k < c; k++)); do
            rnd 60000; pid=$((1000 + R)); rnd ${#APPS[@]}; nm=${APPS[R]}; rnd 30000
            out+="$pid, $nm, $((500 + R)), ${UUID[i]}"$'\n'
        done
    done
    printf '%s' "$out"
}
if [ "$kind" = apps ]; then [ -z "$ms" ] || exec "$full" "$@"; apps; exit 0; fi

U=()
for ((i = 0; i < NG; i++)); do rnd 101; U[i]=$R; done
step() {
    local i u d pc tt
    for ((i = 0; i < NG; i++)); do
        rnd 16; d=$((R % 8 + 1)); ((R >= 8)) && d=$((-d))
        u=$((U[i] + d)); ((u < 0)) && u=$((-u)); ((u > 100)) && u=$((200 - u)); U[i]=$u
        rnd 3001; pc=$((7000 + (PLIM[i] - 7000) * u / 100 + R - 1500)); ((pc < 5000)) && pc=5000
        ((pc > PLIM[i])) && pc=${PLIM[i]}; PW[i]=$((pc / 100)).$((pc % 100 / 10))$((pc % 10))
        if [ -n "$clk" ]; then
            if ((u > 3)); then SM[i]=$((1410 + u * 570 / 100)) MC[i]=2619 PS[i]=P0
            else SM[i]=345 MC[i]=1593 PS[i]=P8; fi
        fi
        rnd 4
        if ((R == 0)); then
            tt=$((30 + u / 2))
            if ((T[i] < tt)); then T[i]=$((T[i] + 1)); elif ((T[i] > tt)); then T[i]=$((T[i] - 1))
            else rnd 2; T[i]=$((T[i] + 2 * R - 1)); fi
        fi
        rnd 8
        if ((R == 0)); then
            rnd 401; d=$((R + 100)); rnd 2; ((R)) && d=$((-d))
            d=$((M[i] + d)); ((d < 500)) && d=500; ((d > MTOT[i] - 256)) && d=$((MTOT[i] - 256)); M[i]=$d
        fi
    done
}
# the row, in the order asked, compiled once into render() (no per-field case per tick)
expr= clk=
for f in "${F[@]}"; do
    case $f in
        index) e='$i' ;;
        uuid) e='${UUID[i]}' ;;
        name) e='${NAME[i]}' ;;
        utilization.gpu) e='${U[i]}' ;;
        utilization.memory) e='$((U[i] * 6 / 10))' ;;
        memory.used) e='${M[i]}' ;;
        memory.total) e='${MTOT[i]}' ;;
        memory.free) e='$((MTOT[i] - M[i]))' ;;
        temperature.gpu) e='${T[i]}' ;;
        power.draw) e='${PW[i]}' ;;
        power.limit) e='${PLS[i]}' ;;
        fan.speed) e='${FAN[i]}' ;;
        mig.mode.current) e='${MIG[i]}' ;;
        clocks.sm|clocks.current.sm) e='${SM[i]}'; clk=1 ;;
        clocks.mem|clocks.current.memory) e='${MC[i]}'; clk=1 ;;
        pstate) e='${PS[i]}'; clk=1 ;;
    esac
    expr+="${expr:+, }$e"
done
for ((i = 0; i < NG; i++)); do pc=${PLIM[i]}; PLS[i]=$((pc / 100)).$((pc % 100 / 10))$((pc % 10)); done
eval 'render() { local i out=; for ((i = 0; i < NG; i++)); do out+="'"$expr"'"$'"'\\n'"'; done; printf "%s" "$out"; }'
if [ -z "$ms" ]; then
    printf -v now '%(%s)T' -1; r=$(( (SEED * 31 + now) & 2147483647 )); step; render; exit 0
fi
f=${TMPDIR:-/tmp}/fake-nvsmi.$$
mkfifo "$f" && exec 9<>"$f"; rm -f "$f"
# microseconds on an absolute schedule: no drift, as a real -lms timer
now=${EPOCHREALTIME/./}; next=$now
while :; do
    step
    render || exit 0
    next=$((next + ms * 1000)); now=${EPOCHREALTIME/./}; d=$((next - now))
    if ((d > 0)); then printf -v s '%d.%06d' $((d / 1000000)) $((d % 1000000)); read -t "$s" -u 9 _
    else next=$now; fi
done
"""


def _centi(value: str) -> int:
    whole, _, frac = value.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


def script(frame: str, apps_fields: str, gpu_count: int) -> str:
    """The fake's text for GPUs described by `frame` (QUERY_FIELDS order), `@SEED@` unfilled."""
    rows = [line.split(", ") for line in frame.splitlines() if line.strip()]
    if len(rows) != gpu_count or any(len(r) != len(GPU_FIELDS) for r in rows):
        raise ValueError(f"frame has {len(rows)} rows, not {gpu_count} of {len(GPU_FIELDS)} fields:\n{frame}")
    col = {name: [r[k] for r in rows] for k, name in enumerate(GPU_FIELDS)}
    for value in col["uuid"] + col["name"] + col["fan.speed"] + col["mig.mode.current"]:
        if "'" in value:
            raise ValueError(f"a quote in a frame value: {value!r}")

    def words(name: str) -> str:
        return " ".join(f"'{v}'" for v in col[name])

    def numbers(name: str, conv=int) -> str:  # type: ignore[no-untyped-def]
        return " ".join(str(conv(v)) for v in col[name])

    text = _TEMPLATE
    for key, value in (
        ("__NG__", str(gpu_count)),
        ("__UUID__", words("uuid")),
        ("__NAME__", words("name")),
        ("__MTOT__", numbers("memory.total")),
        ("__PLIM__", numbers("power.limit", _centi)),
        ("__FAN__", words("fan.speed")),
        ("__MIG__", words("mig.mode.current")),
        ("__MUSED__", numbers("memory.used")),
        ("__TEMP__", numbers("temperature.gpu")),
        ("__APPS_FIELDS__", apps_fields),
    ):
        text = text.replace(key, value)
    return text


def with_seed(text: str, seed: int) -> str:
    """One instance's copy: its walk's seed filled in."""
    return text.replace("@SEED@", str(int(seed) & 0x7FFFFFFF))
