"""Notifications sent FROM the instance (issue 15): ship the sender, test it, read what it sent.

`install_notify` writes `<state_dir>/bin/notify-v1.sh` + `notify-v1.py` (+ gpu-tui's log rules
in `bin/notify-v1-core/`) and `<state_dir>/notify/targets.json` (mode 600: the targets the
instance can send, the events wanted and the messages, translated here, in the user's language),
plus `notify/sh/` for instances without python3. The job runner (job-runner.sh) and the autostop
watchdog (autostop.sh) start the sender detached once they have recorded what happened. Each
send appends one JSON line to `<state_dir>/notify/outbox.jsonl`; `read_outbox` reads it back so
the laptop shows failed sends and never resends an id found there. docs/NOTIFY.md has the rest.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from gpu_tui.config.language import catalog
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.fit.oomfit import TEXTS as OOM_FIT_TEXTS
from gpu_tui.core.i18n import LANGUAGES, _, using
from gpu_tui.core.notify.urls import INSTANCE_SCHEMES, Unsupported, mask, request_for, scheme_of, support_reason
from gpu_tui.core.trainlog.failures import KILLED, OUT_OF_HOST_MEMORY
from gpu_tui.core.trainlog.hints import DISK_TEXT, FRAME_TEXT, hint_for, hint_table
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import fill_script, sh_c
from gpu_tui.services.notify.bundle import portable_core, sender_files, sh_target_files
from gpu_tui.services.providers.autodl_balance import TOKEN_NAME
from gpu_tui.services.statedir import shell_state_dir

__all__ = [
    "INSTANCE_SCHEMES",
    "INSTANCE_EVENTS",
    "SENDER_NAME",
    "TargetResult",
    "SentEvent",
    "instance_support",
    "mask",
    "messages",
    "targets_document",
    "install_notify",
    "send_test_from_instance",
    "read_outbox",
    "wechat_base",
]

INSTANCE_EVENTS = ("job_end", "job_failure", "autostop")
"""The events the instance sends itself (the laptop sends the others)."""
SENDER_NAME = "notify-v1.sh"
TIMEOUT_S, ATTEMPTS, BUDGET_S = 8, 3, 30
"""Per attempt, attempts per target, and the most one send may take (all targets in parallel)."""
WATCH_S, FAILURE_GRACE_S = 30, 15
"""How often a running job's log is read for a failure, and how long a failure waits for the job
to exit (then its job_end carries it: one message, not two)."""
OUTBOX_LINES = 500


@dataclass(frozen=True, slots=True)
class TargetResult:
    target_masked: str
    ok: bool
    error: str | None
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class SentEvent:
    """One line of the instance's outbox."""

    id: str
    event: str
    instance: str
    job: str | None
    title: str
    body: str
    at: float
    targets: tuple[TargetResult, ...]
    via: str = ""
    """How it was sent: `python3.N`, `curl` or `wget`."""

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.targets)


def wechat_base() -> str:
    """AutoDL's WeChat message API base: `GPU_TUI_AUTODL_WECHAT_API` (as the laptop's sender
    reads it), else `GPU_TUI_AUTODL_API` (the balance API's), else www.autodl.com."""
    env = os.environ
    return (env.get("GPU_TUI_AUTODL_WECHAT_API") or env.get("GPU_TUI_AUTODL_API") or "https://www.autodl.com").rstrip(
        "/"
    )


def instance_support(url: str) -> str | None:
    """None when the instance can send `url`, else why not (translated). Signing targets also
    need python3 or openssl there: `install_notify` says so when the instance has neither."""
    return support_reason(url)


def messages(instance: str) -> dict[str, str]:
    """The sender's message templates in the language in force; `{job}`, `{reason}`, ... are
    filled on the instance. The first line says what happened and fits a lock screen."""
    m = {
        "job_end.succeeded": _("{instance}: job {job} finished"),
        "job_end.failed": _("{instance}: job {job} failed: {reason}"),
        "job_end.stopped": _("{instance}: job {job} stopped"),
        "job_failure": _("{instance}: job {job}: {reason} (still running)"),
        "line.duration": _("ran {duration}"),
        "line.cost": _("cost {cost}"),
        "line.loss": _("last loss {loss}"),
        "line.exit": _("exit code {code}"),
        "autostop.about": _("{instance}: idle, autostop is shutting it down"),
        "autostop.done": _("{instance}: shut down by autostop"),
        "autostop.failed": _("{instance}: autostop could not shut it down: {error}"),
        "test": _("{instance}: gpu-tui test message"),
        "test.body": _("Sent by the instance itself: notifications work with the laptop closed."),
    }
    out = {k: v.replace("{instance}", instance) for k, v in m.items()}
    out["instance"] = instance
    out["killed"] = KILLED
    # the shell sender (no python3 there, so no log rules) knows three failures: killed (with the
    # OOM killer's evidence or without), exit code
    out["hint.killed"] = hint_for(KILLED) or ""
    out["hint.oom"] = hint_for(OUT_OF_HOST_MEMORY) or ""
    out["hint.exit"] = hint_for("exit code 1") or ""
    return out


def evidence_texts() -> dict[str, str]:
    """{English: in the language in force} of what the sender says under a failure's hint (what
    fit says of an OOM job's model, the full disk): the shipped core says them through this table."""
    return {text: _(text) for text in (*OOM_FIT_TEXTS, DISK_TEXT, FRAME_TEXT)}


def targets_document(
    inst: InstanceConfig,
    targets: Sequence[str],
    events: Collection[str],
    *,
    currency: str = "¥",
    autodl_token: str | None = None,
    language: str | None = None,
    events_of: Mapping[str, Collection[str]] | None = None,
) -> tuple[dict[str, object], dict[str, str], list[str]]:
    """(targets.json, {notify/sh/ file: text}, warnings) for the targets the instance can send;
    the messages in `language` (one of core.i18n.LANGUAGES; else the language in force).
    `events_of`: a target's own events (`notify add --events`), where it has them; else `events`."""
    warnings: list[str] = []
    rows: list[dict[str, object]] = []
    sh: dict[str, str] = {}
    for url in targets:
        why = instance_support(url)
        if why is None:
            try:
                req = request_for(
                    url,
                    autodl_token=autodl_token,
                    autodl_base=wechat_base(),
                    base=os.environ.get("GPU_TUI_NOTIFY_BASE") or None,
                )
            except Unsupported as exc:
                why = str(exc)
        if why is not None:
            warnings.append(_("{target}: not sent from the instance ({why})").format(target=mask(url), why=why))
            continue
        masked = mask(url)
        try:
            files = sh_target_files(len(rows), req, masked)
        except Unsupported as exc:
            warnings.append(_("{target}: not sent from the instance ({why})").format(target=masked, why=exc.message))
            continue
        own = sorted(e for e in (events_of or {}).get(url, events) if e in INSTANCE_EVENTS)
        rows.append(
            {
                "masked": masked,
                "scheme": req.scheme,
                "url": req.url,
                "headers": [list(h) for h in req.headers],
                "body": req.body,
                "sign": req.sign,
                "secret": req.secret,
                "ok_field": req.ok_field,
                "ok_values": list(req.ok_values),
                "events": own,
            }
        )
        sh.update(files)
        sh[f"t{len(rows) - 1}.events"] = "".join(f"{e}\n" for e in own)
    wanted = sorted(e for e in events if e in INSTANCE_EVENTS)
    if language in LANGUAGES:
        with using(catalog(language), language):
            msgs, hints, texts = messages(inst.name), hint_table(), evidence_texts()
    else:
        msgs, hints, texts = messages(inst.name), hint_table(), evidence_texts()
    doc: dict[str, object] = {
        "version": 1,
        "instance": inst.name,
        "events": wanted,
        "hourly_rate": inst.hourly_rate,
        "currency": currency,
        "timeout": TIMEOUT_S,
        "attempts": ATTEMPTS,
        "budget": BUDGET_S,
        "watch_seconds": WATCH_S,
        "failure_grace": FAILURE_GRACE_S,
        "language": language,
        "messages": msgs,
        "hints": hints,
        "texts": texts,
        "targets": rows,
    }
    sh["settings"] = f"{TIMEOUT_S}\n{ATTEMPTS}\n{BUDGET_S}\n{inst.hourly_rate}\n{currency}\n"
    sh["events"] = "".join(f"{e}\n" for e in wanted)
    for key, text in msgs.items():
        sh[f"msg.{key}"] = " ".join(text.split()) + "\n"
    return doc, sh, warnings


def _put(path: str, text: str) -> str:
    """A shell line writing `text` to `path` (both stay on stdin, never on a command line)."""
    mark = "GPUTUI_" + secrets.token_hex(8)
    data = base64.encodebytes(text.encode("utf-8")).decode("ascii")
    return f'base64 -d > "{path}.tmp" <<\'{mark}\'\n{data}{mark}\nmv -f "{path}.tmp" "{path}"\n'


_PROBE = r"""
py=none
for c in python3 python; do
  command -v "$c" >/dev/null 2>&1 || continue
  v=$("$c" -V 2>&1)
  case $v in 'Python 3.'[6-9]* | 'Python 3.'[1-9][0-9]*) py=${v#Python }; break ;; esac
done
echo "python $py"
command -v curl >/dev/null 2>&1 && echo "curl yes"
command -v wget >/dev/null 2>&1 && wget --version 2>/dev/null | grep -q 'GNU Wget' && echo "wget yes"
command -v openssl >/dev/null 2>&1 && echo "openssl yes"
echo installed
"""


async def install_notify(
    host: Host,
    inst: InstanceConfig,
    targets: Sequence[str],
    events: Collection[str],
    language: str,
    *,
    currency: str = "¥",
    store: SecretStore | None = None,
    events_of: Mapping[str, Collection[str]] | None = None,
) -> list[str]:
    """Ship the sender and the instance's targets; returns warnings (targets it cannot send,
    tools it lacks). `targets=[]` removes the targets (the outbox stays). `language` is the one
    in force (core.i18n); the messages are translated with it here, on the laptop."""
    state = shell_state_dir(inst)
    if not targets:
        res = await host.run(sh_c(f"rm -rf {state}/notify/targets.json {state}/notify/sh"), timeout=30)
        if not res.ok:
            raise RemoteError(
                _("{name}: cannot remove the notification targets: {error}").format(
                    name=inst.name, error=res.stderr.strip()[:300]
                )
            )
        return []
    token = None
    if any(scheme_of(t) == "autodl-wechat" for t in targets):
        secret = await asyncio.to_thread((store or SecretStore()).get_password, TOKEN_NAME)
        token = secret.get_secret_value() if secret else None
    doc, sh_files, warnings = targets_document(
        inst, targets, events, currency=currency, autodl_token=token, language=language, events_of=events_of
    )
    lines = [
        "set -e",
        "umask 077",
        f"s={state}",
        'mkdir -p "$s/bin/notify-v1-core" "$s/notify"',
        'chmod 700 "$s/notify"',
        'rm -rf "$s/notify/sh.new"',
        'mkdir "$s/notify/sh.new"',
    ]
    for name, text in sender_files().items():
        lines.append(_put(f"$s/bin/{name}", text))
    for name, text in portable_core().items():
        lines.append(_put(f"$s/bin/notify-v1-core/{name}", text))
    for name, text in sh_files.items():
        lines.append(_put(f"$s/notify/sh.new/{name}", text))
    lines.append(_put("$s/notify/targets.json", json.dumps(doc, ensure_ascii=False, indent=1)))
    lines += ['rm -rf "$s/notify/sh"', 'mv "$s/notify/sh.new" "$s/notify/sh"', _PROBE]
    res = await host.run("sh -s", stdin="\n".join(lines), timeout=60)
    if not res.ok or "installed" not in res.stdout:
        raise RemoteError(
            _("{name}: cannot install the notification sender: {error}").format(
                name=inst.name, error=(res.stderr or res.stdout).strip()[:300]
            )
        )
    return warnings + _tool_warnings(inst, res.stdout, doc)


def _tool_warnings(inst: InstanceConfig, probe: str, doc: dict[str, object]) -> list[str]:
    have = dict(line.split(" ", 1) for line in probe.splitlines() if " " in line)
    if have.get("python", "none") != "none":
        return []
    rows = doc["targets"]
    assert isinstance(rows, list)
    if "curl" not in have and "wget" not in have:
        return [
            _("{name}: no python3, curl or GNU wget on the instance: it cannot send notifications").format(
                name=inst.name
            )
        ]
    out = [
        _("{name}: no python3 on the instance: a failed job's notice gives its exit code, not the log's reason").format(
            name=inst.name
        )
    ]
    if "openssl" not in have:
        out += [
            _(
                "{target}: needs signing (HMAC-SHA256), and the instance has neither python3 nor openssl: "
                "sent from the laptop only"
            ).format(target=r["masked"])
            for r in rows
            if r.get("sign")
        ]
    return out


def _result(obj: object) -> TargetResult | None:
    if not isinstance(obj, dict):
        return None
    err = obj.get("error")
    return TargetResult(
        str(obj.get("target", "")),
        obj.get("ok") is True,
        None if err is None else str(err),
        int(obj.get("attempts") or 0),
    )


async def send_test_from_instance(host: Host, inst: InstanceConfig) -> list[TargetResult]:
    """Run the shipped sender once with a test message; one result per target it holds."""
    state = shell_state_dir(inst)
    script = fill_script(
        "[ -f __S__/notify/targets.json ] || exit 0\nsh __S__/bin/__N__ __S__ test", S=state, N=SENDER_NAME
    )
    res = await host.run(sh_c(script), timeout=BUDGET_S + 30)
    out: list[TargetResult] = []
    for line in res.stdout.splitlines():
        try:
            found = _result(json.loads(line))
        except ValueError:
            continue
        if found is not None:
            out.append(found)
    if not out and res.exit_status not in (0, 3):
        raise RemoteError(
            _("{name}: the notification test did not run: {error}").format(
                name=inst.name, error=(res.stderr or res.stdout).strip()[:300]
            )
        )
    return out


def _sent(obj: object) -> SentEvent | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        return None
    try:
        results = tuple(r for r in (_result(t) for t in obj.get("targets") or ()) if r is not None)
        return SentEvent(
            obj["id"],
            str(obj.get("event", "")),
            str(obj.get("instance", "")),
            None if obj.get("job") is None else str(obj["job"]),
            str(obj.get("title", "")),
            str(obj.get("body", "")),
            float(obj.get("at") or 0),
            results,
            str(obj.get("via", "")),
        )
    except (TypeError, ValueError):
        return None


async def read_outbox(host: Host, inst: InstanceConfig, since: float | None = None) -> list[SentEvent]:
    """What the instance sent (its last OUTBOX_LINES sends), oldest first; `since`: at or after."""
    path = f"{shell_state_dir(inst)}/notify/outbox.jsonl"
    res = await host.run(sh_c(f"[ -f {path} ] || exit 0; tail -n {OUTBOX_LINES} {path}"), timeout=30)
    if not res.ok:
        raise RemoteError(
            _("{name}: cannot read the notification outbox: {error}").format(
                name=inst.name, error=res.stderr.strip()[:300]
            )
        )
    events = []
    for line in res.stdout.splitlines():
        try:
            found = _sent(json.loads(line))
        except ValueError:
            continue
        if found is not None and (since is None or found.at >= since):
            events.append(found)
    return events
