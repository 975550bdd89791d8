"""The TOML config file (CONTRACTS.md) as validated pydantic settings.

Every error becomes one `ConfigError` naming the file, the line and the field, with a
did-you-mean for unknown keys: users edit this file by hand over SSH and deserve better than a
traceback.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpu_tui.config.tomllines import locate
from gpu_tui.core import i18n
from gpu_tui.core.actions import ACTION_IDS
from gpu_tui.core.errors import ConfigError
from gpu_tui.core.i18n import N_, _, ngettext
from gpu_tui.core.money.cost import currency_of
from gpu_tui.core.notify.rules import DEFAULT_EVENTS, EventName
from gpu_tui.core.slurm import TIME_RE

__all__ = [
    "InstanceConfig",
    "NotifySection",
    "Settings",
    "SettingsSection",
    "SyncConfig",
    "SlurmDefaults",
    "load_settings",
    "parse_settings",
]

NAME_PATTERN = r"^[A-Za-z0-9._-]+$"
Provider = Literal["autodl", "runpod", "vast", "generic"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class SyncConfig(_Strict):
    """Per-instance sync settings (`sync = {...}`)."""

    local: str | None = None
    """Local directory; default the current directory."""
    remote: str | None = None
    """Remote directory; relative paths are relative to the remote home; default `workdir`."""
    exclude: tuple[str, ...] = (".git", "__pycache__")
    """rsync-style patterns left out of every transfer."""


class SlurmDefaults(_Strict):
    """Defaults for jobs submitted on a `scheduler = "slurm"` login node (`slurm = {...}`); the
    `run` options override them."""

    partition: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*$")] | None = None
    """Partition (`--partition`), or a list sbatch tries in turn (`debug,gpu`); default: the
    cluster's default partition."""
    account: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]+$")] | None = None
    """Account to charge (`--account`)."""
    time: Annotated[str, Field(pattern=TIME_RE.pattern)] | None = None
    """Time limit in sbatch's forms (`04:00:00`, `1-00:00:00`, `90`)."""
    gpus: Annotated[int, Field(ge=0, le=1024)] | None = None
    """GPUs per job (`--gpus`)."""
    extra: tuple[Annotated[str, Field(pattern=r"^--?[A-Za-z][\w-]*(=[^\n\x00]*)?$")], ...] = ()
    """More sbatch options, one word each: `["--qos=normal", "--mem=32G"]`."""


class InstanceConfig(_Strict):
    """One rented machine (`[[instances]]`)."""

    name: Annotated[str, Field(min_length=1, max_length=64, pattern=NAME_PATTERN)]
    """Unique name: letters, digits, `.`, `_`, `-`. Also the keyring username for its password."""
    host: Annotated[str, Field(min_length=1, pattern=r"^[^\s]+$")]
    """Host name or address; may be an alias from ~/.ssh/config."""
    port: Annotated[int, Field(ge=1, le=65535)] = 22
    """SSH port."""
    user: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")] = "root"
    """SSH user."""
    hourly_rate: Annotated[float, Field(ge=0)] = 0.0
    """Price per hour in `settings.currency`, or in `currency` when set."""
    currency: Annotated[str, Field(min_length=1, max_length=8)] | None = None
    """This instance's own currency symbol where it differs from `settings.currency` (an
    imported RunPod or Vast instance bills in `$`)."""
    provider: Provider = "generic"
    """autodl | runpod | vast | generic: decides how shutdown works."""
    provider_id: str = ""
    """The provider's id for this instance, where its CLI or API needs one."""
    release_days: Annotated[float, Field(ge=0, le=3650)] | None = None
    """Days powered off after which the provider may release it and its data (core/power.py:
    AutoDL 15); 0: never. None: the provider's rule."""
    identity_file: str | None = None
    """Private key file; otherwise agent keys, default keys, or the stored password."""
    workdir: str | None = None
    """Default working directory for jobs and sync."""
    state_dir: Annotated[str, Field(min_length=1)] = "~/.gpu-tui"
    """Where gpu-tui keeps jobs and scripts on the instance."""
    shutdown_command: str = ""
    """Overrides the provider's shutdown command when set."""
    sync: SyncConfig = SyncConfig()
    """Sync settings."""
    scheduler: Literal["none", "slurm"] = "none"
    """`slurm`: a cluster login node; `run` submits with sbatch, `stop` uses scancel."""
    slurm: SlurmDefaults = SlurmDefaults()
    """Defaults for SLURM jobs (only with scheduler = "slurm")."""

    @property
    def address(self) -> str:
        """`user@host:port`, for messages."""
        return f"{self.user}@{self.host}:{self.port}"

    def bills_in(self, default: str) -> str:
        """The currency this instance bills in: its own, else `default` (settings.currency)."""
        return currency_of(self.currency, default)


class SettingsSection(_Strict):
    """The `[settings]` table."""

    refresh_seconds: Annotated[float, Field(ge=0.25, le=60)] = 1.0
    """Metric sampling interval in seconds."""
    currency: Annotated[str, Field(min_length=1, max_length=8)] = "¥"
    """Symbol shown before money amounts."""
    idle_util_percent: Annotated[int, Field(ge=0, le=100)] = 5
    """A GPU below this utilisation is idle."""
    idle_minutes: Annotated[int, Field(ge=1)] = 15
    """Warn (and autostop, when armed) after this long idle."""
    budget_daily: Annotated[float, Field(ge=0)] = 0.0
    """Warn when today's cost passes this; 0 = off."""
    connect_timeout_seconds: Annotated[float, Field(gt=0, le=120)] = 10.0
    """Longest wait for one SSH connection (TCP + handshake + login)."""
    language: Literal["auto", "en", "zh-CN"] = "auto"
    """The interface language; auto reads LC_ALL, LC_MESSAGES, then LANG (GPU_TUI_LANG and
    --lang win over this)."""


_TARGET_PATTERN = r"^(autodl-wechat|[A-Za-z][A-Za-z0-9+.-]*://\S*)$"


class NotifySection(_Strict):
    """The `[notify]` table: where notifications go and which events are sent."""

    urls: tuple[Annotated[str, Field(min_length=3, pattern=_TARGET_PATTERN)], ...] = ()
    """Apprise URLs (or `autodl-wechat`) kept in the config: for targets without a token
    (a self-hosted ntfy) or headless use; `gpu-tui notify add` keeps the others in the keyring."""
    events: tuple[EventName, ...] = DEFAULT_EVENTS
    """The events sent to the config's URLs (and to keyring targets added without --events)."""
    balance_hours: Annotated[float, Field(gt=0, le=24 * 30)] = 12.0
    """Notify when the AutoDL balance lasts less than this at the current burn rate."""
    unreachable_minutes: Annotated[float, Field(ge=1, le=24 * 60)] = 10.0
    """Notify when an instance has been unreachable this long (dashboard open)."""


class PrometheusConfig(_Strict):
    """`[prometheus.NAME]`: a lab's Prometheus, whose dcgm-exporter nodes `status` lists (issue 26)."""

    url: Annotated[str, Field(pattern=r"^https?://[^\s/]+(/[^\s]*)?$")]
    """Its base URL, e.g. `http://prometheus.lab:9090` (the API is under /api/v1)."""
    match: Annotated[str, Field(max_length=500, pattern=r"^[^\n]*$")] = ""
    """A label selector every query carries: `{cluster="a"}`."""
    hourly_rate: Annotated[float, Field(ge=0)] = 0.0
    """What a GPU (`rate_per = "gpu"`) or a node costs an hour, in `currency`."""
    rate_per: Literal["gpu", "node"] = "gpu"
    currency: Annotated[str, Field(min_length=1, max_length=8)] | None = None
    """None: settings.currency."""
    refresh_seconds: Annotated[float, Field(ge=1, le=3600)] = 15.0
    """How often the dashboard asks (Prometheus's default scrape interval: asking faster reads the same samples)."""
    auth: Literal["none", "bearer", "basic"] = "none"
    """`bearer`: a token; `basic`: `user` and a password. Either from the keyring
    (`keyring set gpu-tui prometheus:NAME`) or GPU_TUI_PASSWORD_PROMETHEUS_<NAME>, never this file."""
    user: Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\s:]+$")] | None = None
    """The basic-auth user (auth = "basic")."""


class Settings(_Strict):
    """The whole config file."""

    settings: SettingsSection = SettingsSection()
    """General settings."""
    keys: dict[str, str] = {}
    """Key remaps: action id = key."""
    notify: NotifySection = NotifySection()
    """Notifications (see README, "Notifications")."""
    instances: tuple[InstanceConfig, ...] = ()
    """The instances, in the order the dashboard lists them."""
    prometheus: dict[Annotated[str, Field(min_length=1, max_length=64, pattern=NAME_PATTERN)], PrometheusConfig] = {}
    """Labs' Prometheus servers by name: `status` lists their nodes (README, "A lab's fleet")."""

    def currency_of(self, inst: InstanceConfig) -> str:
        """The currency `inst` bills in: its own, else settings.currency."""
        return inst.bills_in(self.settings.currency)

    def instance(self, name: str) -> InstanceConfig:
        for inst in self.instances:
            if inst.name == name:
                return inst
        known = [i.name for i in self.instances]
        hint = _did_you_mean(name, known)
        if not known:
            raise ConfigError(_("no instance named {name!r}{hint}; configured: none").format(name=name, hint=hint))
        raise ConfigError(
            _("no instance named {name!r}{hint}; configured: {names}").format(
                name=name, hint=hint, names=", ".join(known)
            )
        )


def _did_you_mean(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return _(" (did you mean {choice!r}?)").format(choice=close[0]) if close else ""


def _field_path(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    parts: list[str] = []
    node: Any = data
    for item in loc:
        if isinstance(item, int):
            name = node[item].get("name") if isinstance(node, list) and isinstance(node[item], dict) else None
            parts[-1] += f"[{item}]" + (f" ({name!r})" if isinstance(name, str) else "")
        else:
            parts.append(str(item))
        try:
            node = node[item]
        except (KeyError, IndexError, TypeError):
            node = None
    return ".".join(parts) or _("(top level)")


def _model_for(loc: tuple[Any, ...]) -> type[BaseModel]:
    model: type[BaseModel] = Settings
    for item in loc[:-1]:
        if isinstance(item, int):
            continue
        field = model.model_fields.get(str(item))
        if field is None:
            break
        ann = field.annotation
        inner = (get_args(ann) or (ann,))[0] if ann is not None else None
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            model = inner
        elif isinstance(ann, type) and issubclass(ann, BaseModel):
            model = ann
    return model


# pydantic's messages (in English) by error type, for the other languages; their values come
# from the error's `ctx`
_PYDANTIC = {
    "greater_than_equal": N_("Input should be greater than or equal to {ge}"),
    "greater_than": N_("Input should be greater than {gt}"),
    "less_than_equal": N_("Input should be less than or equal to {le}"),
    "less_than": N_("Input should be less than {lt}"),
    "int_type": N_("Input should be a valid integer"),
    "int_parsing": N_("Input should be a valid integer, unable to parse string as an integer"),
    "int_from_float": N_("Input should be a valid integer, got a number with a fractional part"),
    "float_type": N_("Input should be a valid number"),
    "float_parsing": N_("Input should be a valid number, unable to parse string as a number"),
    "bool_type": N_("Input should be a valid boolean"),
    "bool_parsing": N_("Input should be a valid boolean"),
    "string_type": N_("Input should be a valid string"),
    "string_too_short": N_("String should have at least {min_length} characters"),
    "string_too_long": N_("String should have at most {max_length} characters"),
    "string_pattern_mismatch": N_("String should match pattern '{pattern}'"),
    "literal_error": N_("Input should be one of: {expected}"),
    "dict_type": N_("Input should be a table"),
    "model_type": N_("Input should be a table"),
    "tuple_type": N_("Input should be a list"),
    "list_type": N_("Input should be a list"),
}


def _pydantic_message(err: Any) -> str:
    """pydantic's message, in the language in force where it is one of _PYDANTIC."""
    msg = str(err["msg"]).removeprefix("Value error, ")
    template = _PYDANTIC.get(err["type"])
    if template is None or i18n.active_language() == "en":
        return msg
    ctx = dict(err.get("ctx") or {})
    if "expected" in ctx:  # "'a', 'b' or 'c'": the choices, without the English "or"
        ctx["expected"] = ", ".join(re.findall(r"'[^']*'", str(ctx["expected"]))) or ctx["expected"]
    try:
        return _(template).format(**ctx)
    except (KeyError, IndexError, ValueError):
        return msg


def _describe(err: Any, data: dict[str, Any]) -> str:
    loc = tuple(err["loc"])
    where = _field_path(loc, data)
    if err["type"] == "extra_forbidden":
        key = str(loc[-1])
        if key in {"password", "passwd", "token", "secret"}:
            return _(
                "{where}: secrets are never kept in the config file; store the password with "
                "`gpu-tui add` (keyring) or set GPU_TUI_PASSWORD_<NAME>"
            ).format(where=where)
        choices = _model_for(loc).model_fields.keys()
        return _("{where}: unknown key {key!r}{hint}").format(where=where, key=key, hint=_did_you_mean(key, choices))
    if err["type"] == "missing":
        return _("{where}: required key is missing").format(where=where)
    msg = _pydantic_message(err)
    if err["type"] == "string_pattern_mismatch" and loc[-1] == "name":
        msg = _("use only letters, digits, '.', '_' and '-'")
    elif err["type"] == "string_pattern_mismatch" and loc[:2] == ("notify", "urls"):
        msg = _("want an Apprise URL (SCHEME://..., e.g. ntfy://TOPIC) or autodl-wechat")
    return _("{where}: {problem} (got {value!r})").format(where=where, problem=msg, value=err.get("input"))


def parse_settings(text: str, source: str = "<config>") -> Settings:
    """Validate TOML text; raise ConfigError naming `source`, line and field on any problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        where = f"{source}:{m.group(1)}" if m else source
        raise ConfigError(_("{where}: not valid TOML: {error}").format(where=where, error=exc)) from None
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        # an unknown key usually explains the "missing" one next to it (a typo), so it goes first
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        first = errors[0]
        line = locate(text, tuple(first["loc"]))
        where = f"{source}:{line}" if line else source
        n = len(errors) - 1
        more = ngettext(" (and {n} more problem)", " (and {n} more problems)", n).format(n=n) if n else ""
        raise ConfigError(f"{where}: {_describe(first, data)}{more}") from None
    for action in settings.keys:
        if action not in ACTION_IDS:
            line = locate(text, ("keys", action))
            where = f"{source}:{line}" if line else source
            raise ConfigError(
                _("{where}: keys.{action}: unknown action id {action!r}{hint}; known: {known}").format(
                    where=where, action=action, hint=_did_you_mean(action, ACTION_IDS), known=", ".join(ACTION_IDS)
                )
            )
    seen: dict[str, int] = {}
    for idx, inst in enumerate(settings.instances):
        if inst.name in seen:
            line = locate(text, ("instances", idx, "name"))
            where = f"{source}:{line}" if line else source
            raise ConfigError(
                _(
                    "{where}: instances[{index}].name: duplicate instance name {name!r} "
                    "(first used by instances[{first}]); names must be unique"
                ).format(where=where, index=idx, name=inst.name, first=seen[inst.name])
            )
        seen[inst.name] = idx
    for lab, prom in settings.prometheus.items():
        if prom.auth == "basic" and prom.user is None:
            line = locate(text, ("prometheus", lab, "auth"))
            where = f"{source}:{line}" if line else source
            raise ConfigError(
                _('{where}: prometheus.{name}: auth = "basic" needs the user too: add user = "..."').format(
                    where=where, name=lab
                )
            )
    return settings


def load_settings(path: Path, *, must_exist: bool = False) -> Settings:
    """Read and validate the config file; a missing default file means no instances yet."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if must_exist:
            raise ConfigError(
                _("{path}: config file not found (create it, or see config.example.toml)").format(path=path)
            ) from None
        return Settings()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(_("{path}: cannot read config file: {error}").format(path=path, error=exc)) from None
    return parse_settings(text, str(path))
