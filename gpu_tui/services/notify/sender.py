"""gpu-tui's notification sender, run ON the instance (shipped to <state_dir>/bin/notify-v1.py).

Never imported by gpu-tui: services/notify/instance.py ships this file's text. It runs under any
python3 >= 3.6 with the standard library only (rented images have old ones), so: no
`from __future__ import annotations`, no `X | None`, no dataclasses.

    python3 notify-v1.py STATE job_end JOBDIR
    python3 notify-v1.py STATE autostop KIND EVENT_ID [DETAIL]    KIND: about | done | failed
    python3 notify-v1.py STATE watch JOBDIR      (while the job runs: job_failure)
    python3 notify-v1.py STATE test

Everything it needs is in STATE/notify/targets.json (mode 600, written by the laptop): the
instance's name, the events wanted, the messages in the user's language, and one request
template per target (core/notify/urls.py). Secrets stay in that file and in this process: none is
ever on a command line or in a log. Each target is tried a few times within one time budget
(~30 s in all); every send appends one JSON line to STATE/notify/outbox.jsonl.

The failure reason of a job comes from gpu-tui's own log rules, shipped beside this file
(bin/notify-v1-core/, the pure core modules): the whole log summary where this python can run it,
else the single-line rules of core/trainlog/failures, else the exit code.
"""

# ruff: noqa: UP006, UP031, UP035, UP045, B905 (python 3.6: typing generics, no zip(strict=))
import base64
import hashlib
import hmac
import importlib
import json
import math
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

LOG_WINDOW = 256 * 1024
REPLY_MAX = 65536


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A webhook does not redirect; following one would hand its token to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def read(path: str, limit: int = -1) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def tail(path: str, window: int) -> Tuple[str, bool]:
    """The last `window` bytes of a file, and whether that is all of it."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - window))
            return f.read().decode("utf-8", "replace"), size <= window
    except OSError:
        return "", True


def number(text: str) -> Optional[int]:
    text = text.strip()
    return int(text) if text.lstrip("-").isdigit() and len(text) < 20 else None


def duration(seconds: Optional[float]) -> str:
    """core/units.format_duration_s's spelling (tests hold the two together)."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    s = int(max(0.0, seconds))
    m, sec = divmod(s, 60)
    h, m = divmod(m, 60)
    d, h = divmod(h, 24)
    if d:
        return "%dd%02dh" % (d, h)
    if h:
        return "%dh%02dm" % (h, m)
    if m:
        return "%dm%02ds" % (m, sec)
    return "%ds" % sec


def money(amount: Optional[float], currency: str) -> str:
    """core/units.format_money's spelling."""
    if amount is None or not math.isfinite(amount):
        return "-"
    return "%s%s" % (currency, f"{amount:,.2f}")


def failure_of(state: str, log: str, whole: bool, code: Optional[int]) -> Tuple[Optional[str], Optional[float]]:
    """(failure, last loss) as `gpu-tui jobs` reads them (services/jobs/runner.info_with_summary);
    `code` None: the job still runs (the failure the log shows so far)."""
    sys.path.insert(0, os.path.join(state, "bin", "notify-v1-core"))
    try:
        # the whole summary: python >= 3.11 (its patterns need it)
        summary = importlib.import_module("gpu_tui_trainlog_read").summarize(log, from_start=whole)
        return summary.finish(code), summary.last_loss
    except Exception as exc:  # noqa: BLE001 (an older python: the single-line rules below)
        note(state, "log summary unavailable here (%s); single-line rules" % type(exc).__name__)
    try:
        logfail = importlib.import_module("gpu_tui_trainlog_failures")
    except Exception as exc:  # noqa: BLE001
        note(state, "log rules unavailable (%s); exit code only" % type(exc).__name__)
        return (None if code == 0 else "exit code %s" % code), None
    lines = log.splitlines()
    if not whole and lines:
        lines = lines[1:]  # a window starts mid-line
    if code == 0:
        return None, None
    for line in lines:
        found = logfail.line_failure(line)
        if found:
            return found, None
    if code in (137, -9):
        return logfail.KILLED, None
    return (None if code is None else "exit code %s" % code), None


def with_evidence(state: str, reason: Optional[str], evidence: Optional[str]) -> Optional[str]:
    """The reason, or the OOM killer's evidence the runner kept (`oom_kill`) where it says more
    (the rule is core/trainlog/failures.with_oom_evidence, as `jobs` applies it)."""
    if reason is None or not evidence:
        return reason
    try:
        found = importlib.import_module("gpu_tui_trainlog_failures").with_oom_evidence(reason, evidence)
        return str(found) if found else reason
    except Exception as exc:  # noqa: BLE001
        note(state, "log rules unavailable (%s); no OOM evidence" % type(exc).__name__)
        return reason


def evidence_lines(conf: Dict[str, Any], state: str, job_dir: str, reason: str, log: str) -> List[str]:
    """Under the hint, what the instance can tell of the failure, as `jobs` says it: what
    `gpu-tui fit` says of an OOM job's model, which disk is full, the traceback's last frame.
    gpu-tui's own core says them (bin/notify-v1-core), in the user's language through
    targets.json `texts`; a python too old for it says nothing more."""
    if not reason.startswith(("CUDA out of memory", "Traceback")) and reason != "No space left on device":
        return []
    try:
        import gettext

        table = conf.get("texts") or {}

        class Texts(gettext.NullTranslations):
            def gettext(self, message: str) -> str:
                return str(table.get(message, message))

        i18n = importlib.import_module("gpu_tui_i18n")
        with i18n.using(Texts(), str(conf.get("language") or "en")):
            hints = importlib.import_module("gpu_tui_trainlog_hints")
            if reason.startswith("Traceback"):
                frame = importlib.import_module("gpu_tui_trainlog_frames").last_frame(log)
                return [hints.frame_text(frame)] if frame else []
            if reason == "No space left on device":
                disk = hints.disk_full(read(os.path.join(job_dir, "disk_full")).strip())
                return [hints.disk_full_text(disk)] if disk is not None else []
            oomfit = importlib.import_module("gpu_tui_fit_oomfit")
            request = json.loads(read(os.path.join(job_dir, "job.json")).splitlines()[0] or "{}")
            fit = oomfit.oom_fit(str(request.get("command") or ""), log)
            return [oomfit.oom_fit_text(fit)] if fit is not None else []
    except Exception as exc:  # noqa: BLE001 (an older python, a damaged file: the hint alone)
        note(state, "no more about the failure here (%s)" % type(exc).__name__)
        return []


def note(state: str, text: str) -> None:
    """One line in STATE/notify/sender.log (never a secret: targets appear masked)."""
    try:
        with open(os.path.join(state, "notify", "sender.log"), "a") as f:
            f.write("%s %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), text))
    except OSError:
        pass


def fill(template: str, values: Dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def compose_job_end(conf: Dict[str, Any], state: str, job_dir: str) -> Optional[Tuple[str, str, str, str]]:
    """(event id, job, title, body) of a finished job; None when it has not finished."""
    job_id = os.path.basename(job_dir.rstrip("/"))
    code = number(read(os.path.join(job_dir, "exit_code")))
    if code is None:
        return None
    job = job_name(job_dir)
    started = number(read(os.path.join(job_dir, "started_at")))
    finished = number(read(os.path.join(job_dir, "finished_at")))
    took = float(finished - started) if started is not None and finished is not None else None
    log = ""
    if os.path.exists(os.path.join(job_dir, "stop_requested")):
        kind, reason, loss = "stopped", None, None
    else:
        log, whole = tail(os.path.join(job_dir, "log"), LOG_WINDOW)
        reason, loss = failure_of(state, log, whole, code)
        reason = with_evidence(state, reason, read(os.path.join(job_dir, "oom_kill")))
        kind = "failed" if reason else "succeeded"
    msgs = conf["messages"]
    rate = float(conf.get("hourly_rate") or 0)
    parts = []
    if took is not None:
        parts.append(fill(msgs["line.duration"], {"duration": duration(took)}))
    if took is not None and rate > 0:
        parts.append(fill(msgs["line.cost"], {"cost": money(took / 3600 * rate, conf.get("currency", ""))}))
    if loss is not None:
        parts.append(fill(msgs["line.loss"], {"loss": "%.4g" % loss}))
    if kind == "failed":
        parts.append(fill(msgs["line.exit"], {"code": str(code)}))
    values = {"job": job, "reason": reason or "", "code": str(code)}
    title = fill(msgs["job_end." + kind], values)
    body = with_hint(" · ".join(parts), conf, reason if kind == "failed" else None)
    if kind == "failed" and reason:
        body = "\n".join([body, *evidence_lines(conf, state, job_dir, reason, log)])
    return "job_end:" + job_id, job, title, body


def with_hint(body: str, conf: Dict[str, Any], reason: Optional[str]) -> str:
    """`body`, then on a line of its own what to do about `reason` (core/hints, translated on the
    laptop: targets.json `hints`, the most specific kind first)."""
    if not reason:
        return body
    for row in conf.get("hints") or []:
        if isinstance(row, list) and len(row) == 2 and reason.startswith(str(row[0])):
            return "%s\n%s" % (body, row[1]) if body else str(row[1])
    return body


def job_name(job_dir: str) -> str:
    try:
        name = json.loads(read(os.path.join(job_dir, "job.json")).splitlines()[0]).get("name")
    except (ValueError, IndexError, AttributeError):
        name = None
    return name or os.path.basename(job_dir.rstrip("/"))


def runner_alive(job_dir: str) -> bool:
    pid = number(read(os.path.join(job_dir, "runner_pid")))
    if pid is None:
        return True  # a runner started a moment ago
    stat = read("/proc/%d/stat" % pid)
    return bool(stat) and stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def watch(conf: Dict[str, Any], state: str, job_dir: str) -> int:
    """While the job runs: a failure its log already shows (a NaN loss) is sent once as
    job_failure, unless the job ends within the grace time (its job_end then carries it)."""
    every = float(conf.get("watch_seconds", 30))
    grace = float(conf.get("failure_grace", 15))

    def ended() -> bool:
        return os.path.exists(os.path.join(job_dir, "exit_code"))

    while not ended() and runner_alive(job_dir):
        time.sleep(every)
        if ended() or os.path.exists(os.path.join(job_dir, "stop_requested")):
            return 0
        log, whole = tail(os.path.join(job_dir, "log"), LOG_WINDOW)
        reason, loss = failure_of(state, log, whole, None)
        if not reason:
            continue
        until = time.time() + grace
        while time.time() < until:
            if ended():
                # one job_end with this failure, not two messages
                note(state, "job_failure:%s held back: the job ended within %gs" % (os.path.basename(job_dir), grace))
                return 0
            time.sleep(0.25)
        if os.path.exists(os.path.join(job_dir, "stop_requested")):
            return 0
        if not once(os.path.join(job_dir, "notified_failure")):
            return 0
        msgs = conf["messages"]
        job = job_name(job_dir)
        body = with_hint(fill(msgs["line.loss"], {"loss": "%.4g" % loss}) if loss is not None else "", conf, reason)
        title = fill(msgs["job_failure"], {"job": job, "reason": reason})
        results = deliver(
            state, conf, "job_failure", "job_failure:" + os.path.basename(job_dir.rstrip("/")), job, title, body
        )
        return 0 if all(r["ok"] for r in results) else 3
    return 0


def sign(target: Dict[str, Any], now: float) -> Tuple[str, str]:
    """(timestamp, signature) for a signed DingTalk or Feishu robot."""
    secret = target["secret"]
    if target["sign"] == "dingtalk":
        ts = str(int(now * 1000))
        digest = hmac.new(secret.encode(), ("%s\n%s" % (ts, secret)).encode(), hashlib.sha256).digest()
        return ts, urllib.parse.quote(base64.b64encode(digest).decode(), safe="")
    ts = str(int(now))
    digest = hmac.new(("%s\n%s" % (ts, secret)).encode(), b"", hashlib.sha256).digest()
    return ts, base64.b64encode(digest).decode()


def render(value: Any, marks: Dict[str, str]) -> Any:
    if isinstance(value, str):
        return marks.get(value, value)
    if isinstance(value, list):
        return [render(v, marks) for v in value]
    if isinstance(value, dict):
        return {k: render(v, marks) for k, v in value.items()}
    return value


def accepted(target: Dict[str, Any], status: int, reply: bytes) -> Optional[str]:
    """None when the service took the message, else why not (from its own reply)."""
    text = reply.decode("utf-8", "replace")
    if not 200 <= status < 300:
        return "HTTP %d: %s" % (status, " ".join(text.split())[:160])
    field = target.get("ok_field")
    if not field:
        return None
    try:
        answer = json.loads(text)
    except ValueError:
        return "unreadable reply: %s" % " ".join(text.split())[:160]
    got = answer.get(field) if isinstance(answer, dict) else None
    if got in target.get("ok_values", []) and type(got) in (type(v) for v in target["ok_values"]):
        return None
    why = ""
    if isinstance(answer, dict):
        why = str(answer.get("errmsg") or answer.get("msg") or answer.get("description") or "")
    return "%s %s: %s" % (field, json.dumps(got), why[:160])


def send_one(target: Dict[str, Any], title: str, body: str, budget: Dict[str, float]) -> Dict[str, Any]:
    """Try one target until it answers, its attempts run out or the budget ends."""
    text = title + ("\n" + body if body else "")
    attempts = 0
    error = None  # type: Optional[str]
    while attempts < budget["attempts"]:
        left = budget["deadline"] - time.time()
        if left < 1:
            error = error or "no time left"
            break
        attempts += 1
        marks = {"@TITLE@": title, "@BODY@": body or title, "@TEXT@": text}
        url = target["url"]
        if target.get("sign"):
            ts, sig = sign(target, time.time())
            marks.update({"@TS@": ts, "@SIGN@": sig})
            url = url.replace("@TS@", ts).replace("@SIGN@", sig)
        data = json.dumps(render(target["body"], marks), ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(url, data=data, method="POST")
        for key, value in target.get("headers", []):
            req.add_header(key, value)
        try:
            with _OPENER.open(req, timeout=min(budget["timeout"], left)) as resp:
                error = accepted(target, resp.status, resp.read(REPLY_MAX))
        except urllib.error.HTTPError as exc:
            error = accepted(target, exc.code, exc.read(REPLY_MAX))
        except Exception as exc:  # noqa: BLE001 (any network failure counts as one failed attempt)
            error = "%s: %s" % (type(exc).__name__, str(exc)[:160])
        if error is None:
            break
        if error.startswith("HTTP 4") and not error.startswith("HTTP 429"):
            break  # refused as sent: another try would be refused the same way
        time.sleep(min(2.0 ** (attempts - 1), max(0.0, budget["deadline"] - time.time() - 1)))
    return {"target": target["masked"], "ok": error is None, "error": error, "attempts": attempts}


def deliver(
    state: str, conf: Dict[str, Any], event: str, event_id: str, job: Optional[str], title: str, body: str
) -> List[Dict[str, Any]]:
    timeout = float(conf.get("timeout", 8))
    budget = {
        "attempts": float(conf.get("attempts", 3)),
        "timeout": timeout,
        "deadline": time.time() + float(conf.get("budget", 30)),
    }
    # each target has the events it asked for (`notify add --events`); a test goes to every one
    chosen = [t for t in conf["targets"] if event == "test" or event in t.get("events", conf.get("events", []))]
    results = [None] * len(chosen)  # type: List[Any]

    def run(i: int, target: Dict[str, Any]) -> None:
        results[i] = send_one(target, title, body, budget)

    threads = [threading.Thread(target=run, args=(i, t), daemon=True) for i, t in enumerate(chosen)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, budget["deadline"] - time.time() + timeout))
    done = [
        r if r is not None else {"target": t["masked"], "ok": False, "error": "timed out", "attempts": 0}
        for r, t in zip(results, chosen)
    ]
    line = {
        "id": event_id,
        "event": event,
        "instance": conf.get("instance", ""),
        "job": job,
        "title": title,
        "body": body,
        "at": time.time(),
        "targets": done,
        "via": "python%d.%d" % sys.version_info[:2],
    }
    with open(os.path.join(state, "notify", "outbox.jsonl"), "a") as f:
        f.write(json.dumps(line, ensure_ascii=False) + "\n")
    for r in done:
        if not r["ok"]:
            note(state, "%s %s: %s (%d attempts)" % (event_id, r["target"], r["error"], r["attempts"]))
    return done


def once(path: str) -> bool:
    """True the first time it is called for `path` (a job's end is sent once, whoever asks)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return True
    except OSError:
        return False


def main(argv: List[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: notify-v1.py STATE EVENT [ARGS]\n")
        return 2
    state, event, args = argv[0], argv[1], argv[2:]
    os.umask(0o077)
    try:
        with open(os.path.join(state, "notify", "targets.json"), encoding="utf-8") as f:
            conf = json.load(f)
    except (OSError, ValueError):
        return 0  # nothing to send to
    wanted = conf.get("events", [])
    msgs = conf["messages"]
    if event == "job_end":
        if "job_end" not in wanted or not args:
            return 0
        found = compose_job_end(conf, state, args[0])
        if found is None or not once(os.path.join(args[0], "notified")):
            return 0
        event_id, job, title, body = found
        results = deliver(state, conf, "job_end", event_id, job, title, body)
    elif event == "watch":
        if "job_failure" not in wanted or not args:
            return 0
        return watch(conf, state, args[0])
    elif event == "autostop":
        kind = args[0] if args else ""
        if "autostop" not in wanted or kind not in ("about", "done", "failed") or len(args) < 2:
            return 0
        title = fill(msgs["autostop." + kind], {"error": args[2] if len(args) > 2 else ""})
        results = deliver(state, conf, "autostop", args[1], None, title, "")
    elif event == "test":
        results = deliver(
            state, conf, "test", "test:%d" % int(time.time() * 1000), None, msgs["test"], msgs["test.body"]
        )
        for r in results:
            print(json.dumps(r))
    else:
        sys.stderr.write("unknown event %r\n" % event)
        return 2
    return 0 if all(r["ok"] for r in results) else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
