"""Turn the login command a provider's web console shows into host, port, user and key.

`gpu-tui add "ssh -p 23456 root@connect.westb.seetacloud.com"` is how most people meet a rented
machine: they copy whatever the console shows (AutoDL, RunPod, vast.ai, a lab wiki) and paste it.
The text is split the way a shell would (`shlex`) and the options are read the way OpenSSH reads
them: clustered flags, `-p2222`, options after the destination, the first value given wins.
Anything that is not a plain login (a remote command, a password) is refused with one message
that says how to fix it. Pure: no I/O.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _

__all__ = ["LoginSpec", "guess_provider", "parse_login", "suggest_name"]

_EXAMPLE = "`ssh -p 23456 root@connect.westb.seetacloud.com`"
_NAME_MAX = 64

# OpenSSH's getopt string, split by whether the flag takes an argument. -P (tag) is recent.
_ARG_FLAGS = frozenset("BbcDEeFIiJLlmOopPQRSWw")
_NO_ARG_FLAGS = frozenset("46AaCfGgKkMNnqsTtVvXxYy")

_USER = re.compile(r"[A-Za-z0-9._-]+")
_HOST = re.compile(r"[A-Za-z0-9._-]+")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]+(%[A-Za-z0-9._-]+)?")
_ENV_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_OPTION = re.compile(r"\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*?)\s*")
# copied text often carries these from web pages and chat apps; shlex would keep them in words
_INVISIBLE = re.compile(r"[\u200b\u200c\u200d\u2060\ufeff]")
# shell quotes are left to shlex; these are not shell quotes but surround pasted commands
_QUOTE_PAIRS = (("`", "`"), ("\u201c", "\u201d"), ("\u2018", "\u2019"))
_PROMPTS = frozenset({"$", "#", "%", ">"})

_PROVIDER_DOMAINS = {
    "autodl": ("seetacloud.com", "autodl.com", "autodl.art"),
    "runpod": ("runpod.io", "runpod.net"),
    "vast": ("vast.ai",),
}


@dataclass(frozen=True)
class LoginSpec:
    """Where and as whom to log in, as read from a pasted login command."""

    host: str
    """Host name, address (IPv6 without brackets) or ~/.ssh/config alias."""
    port: int = 22
    """SSH port, 1..65535."""
    user: str = "root"
    """Login user: letters, digits, `.`, `_`, `-`."""
    identity_file: str | None = None
    """Private key file exactly as written (`~` kept), or None."""


def _fail(what: str, fix: str) -> InputError:
    return InputError(_("login command: {what}; {fix}").format(what=what, fix=fix))


def _eg() -> str:
    return _("e.g. {command}").format(command=_EXAMPLE)


def _short(word: str) -> str:
    # only ever called on words that cannot be a password (flags, ports, hosts, command names)
    return repr(word if len(word) <= 40 else word[:37] + "...")


def _unwrap(text: str) -> str:
    """Drop what surrounds a copied command: blanks, a shell prompt, one pair of quotes."""
    text = _INVISIBLE.sub("", text)
    # NBSP and ideographic spaces come from web consoles; shlex splits on ASCII blanks only
    text = re.sub(r"\s+", " ", text).strip()
    for _round in range(3):
        before = text
        for prompt in _PROMPTS:
            if text.startswith(prompt + " "):
                text = text[len(prompt) + 1 :].strip()
        for opening, closing in _QUOTE_PAIRS:
            if len(text) >= 2 and text[0] == opening and text[-1] == closing:
                text = text[1:-1].strip()
        if text == before:
            break
    return text


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        raise _fail(
            _("a quote is not closed"), _("paste the command exactly as shown, {example}").format(example=_eg())
        ) from None


def _port(value: str, where: str) -> int:
    # ASCII digits only: int() would also accept '٣' and '1_000'
    if not re.fullmatch(r"[0-9]+", value):
        raise _fail(
            _("port {value} {where} is not a number").format(value=_short(value), where=where),
            _("give the SSH port as digits, {example}").format(example=_eg()),
        )
    number = int(value) if len(value) <= 6 else 0
    if not 1 <= number <= 65535:
        raise _fail(
            _("port {value} {where} is out of range").format(value=_short(value), where=where),
            _("an SSH port is between 1 and 65535"),
        )
    return number


def _split_host_port(hostport: str, original: str) -> tuple[str, int | None]:
    if hostport.startswith("["):
        end = hostport.find("]")
        if end == -1:
            raise _fail(
                _("{word} opens '[' without closing it").format(word=_short(original)),
                _("write IPv6 addresses as [addr]:port"),
            )
        host, rest = hostport[1:end], hostport[end + 1 :]
        if not rest:
            return host, None
        if not rest.startswith(":"):
            raise _fail(
                _("unexpected {rest} after ']' in {word}").format(rest=_short(rest), word=_short(original)),
                _("write IPv6 addresses as [addr]:port"),
            )
        return host, _port(rest[1:], _("in {word}").format(word=_short(original)))
    if hostport.count(":") == 1:
        host, _colon, port = hostport.partition(":")
        return host, _port(port, _("in {word}").format(word=_short(original)))
    # no colon, or several: a bare IPv6 address, which cannot carry a port without brackets
    return hostport, None


def _destination(word: str) -> tuple[str | None, str, int | None]:
    """`[ssh://][user@]host[:port]` -> (user, host, port); user and port None when absent."""
    rest = word
    if rest.lower().startswith("ssh://"):
        rest = rest[len("ssh://") :].rstrip("/")
        if "/" in rest:
            raise _fail(
                _("{word} has a path").format(word=_short(word)),
                _("an ssh:// address is ssh://user@host:port, {example}").format(example=_eg()),
            )
    user: str | None = None
    if "@" in rest:
        # OpenSSH splits at the last '@'
        user, _at, rest = rest.rpartition("@")
        if not user:
            raise _fail(
                _("no user before '@' in {word}").format(word=_short(word)), _("write user@host, e.g. root@host")
            )
    host, port = _split_host_port(rest, word)
    if not host:
        raise _fail(
            _("no host in {word}").format(word=_short(word)), _("write user@host, {example}").format(example=_eg())
        )
    return user, host, port


def _check_host(host: str) -> None:
    ok = _IPV6.fullmatch(host) if ":" in host else _HOST.fullmatch(host)
    if not ok or host.startswith(("-", ".")):
        raise _fail(
            _("host {host} is not a host name or address").format(host=_short(host)),
            _("use letters, digits, '.', '-' (or an IP address), {example}").format(example=_eg()),
        )


def _check_user(user: str) -> None:
    if not _USER.fullmatch(user):
        raise _fail(
            _("user {user} is not a valid login name").format(user=_short(user)),
            _("use only letters, digits, '.', '_' and '-'"),
        )


@dataclass
class _Found:
    """What the command said so far; the first value given wins, as in OpenSSH."""

    destination: str | None = None
    """The destination word as written (may hold user and port)."""
    host: str | None = None
    """The host part of the destination."""
    hostname: str | None = None
    """From `-o HostName=`: the real host behind an alias."""
    port: int | None = None
    """From -p, -o Port= or the destination."""
    user: str | None = None
    """From -l, -o User= or the destination."""
    identity_file: str | None = None
    """From -i or -o IdentityFile=."""


def _apply_o(found: _Found, value: str) -> None:
    m = _OPTION.fullmatch(value)
    if not m:
        raise _fail(
            _("-o {value} is not Key=Value").format(value=_short(value)),
            _("write ssh options as -o Key=Value, e.g. -o Port=2222"),
        )
    key, arg = m.group(1).lower(), m.group(2).strip("\"'")
    if key == "port" and found.port is None:
        found.port = _port(arg, _("after -o Port"))
    elif key == "user" and found.user is None:
        found.user = arg
    elif key == "identityfile" and found.identity_file is None:
        found.identity_file = arg
    elif key == "hostname" and found.hostname is None:
        found.hostname = arg
    # every other option (StrictHostKeyChecking, ServerAliveInterval...) says nothing about where to log in


def _apply_flag(found: _Found, flag: str, value: str) -> None:
    if flag == "p" and found.port is None:
        found.port = _port(value, _("after -p"))
    elif flag == "l" and found.user is None:
        found.user = value
    elif flag == "i" and found.identity_file is None:
        found.identity_file = value
    elif flag == "o":
        _apply_o(found, value)
    # -L/-R/-D forwards, -J jumps and the rest take an argument that is consumed and ignored


def _apply_destination(found: _Found, word: str) -> None:
    # taken when met, like OpenSSH: `-l a b@h` logs in as a, `b@h -l a` as b
    user, host, port = _destination(word)
    found.destination, found.host = word, host
    if found.user is None:
        found.user = user
    if found.port is None:
        found.port = port


def _read_ssh_args(args: list[str]) -> _Found:
    found = _Found()
    i = 0
    options_done = False
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--" and not options_done:
            options_done = True
            continue
        if word.startswith("-") and len(word) > 1 and not options_done:
            j = 1
            while j < len(word):
                flag = word[j]
                j += 1
                if flag in _NO_ARG_FLAGS:
                    continue
                if flag not in _ARG_FLAGS:
                    raise _fail(
                        _("ssh has no option -{flag}").format(flag=flag),
                        _("paste the login command as the console shows it, {example}").format(example=_eg()),
                    )
                if j < len(word):
                    value = word[j:]
                elif i < len(args):
                    value = args[i]
                    i += 1
                else:
                    raise _fail(
                        _("-{flag} at the end has no value").format(flag=flag),
                        _("give it one or leave it out, {example}").format(example=_eg()),
                    )
                _apply_flag(found, flag, value)
                break
            continue
        if found.destination is None:
            _apply_destination(found, word)
            # OpenSSH reads options after the destination too (RunPod puts -p and -i there)
            continue
        raise _fail(
            _("there are extra words after the destination {destination}").format(
                destination=_short(found.destination)
            ),
            _("paste only the login, without a remote command (or a password) after it, {example}").format(
                example=_eg()
            ),
        )
    return found


def parse_login(text: str) -> LoginSpec:
    """Parse a pasted login: `ssh [options] [user@]host`, `user@host:port`, `ssh://...`, a bare host.

    Raises InputError (and nothing else) naming what is wrong and how to fix it; a password in
    the text is never repeated in the message.
    """
    words = _split(_unwrap(text))
    # the whole command in shell quotes ('ssh -p 2222 host') arrives as one word
    for _round in range(2):
        if len(words) == 1 and " " in words[0]:
            words = _split(_unwrap(words[0]))
    if words and words[0] in _PROMPTS:
        words = words[1:]
    if not words:
        raise _fail(_("it is empty"), _("paste the SSH login your provider shows, {example}").format(example=_eg()))
    password_hint = _(
        "never put a password into a command (it lands in shell history and process lists): "
        "paste just the ssh part and give the password when asked, or with --password-stdin"
    )
    if any(re.split(r"[/\\]", w)[-1].lower() in ("sshpass", "sshpass.exe") for w in words):
        raise _fail(_("it runs sshpass with a password"), password_hint)
    while words and _ENV_ASSIGN.match(words[0]):
        if "PASS" in words[0].partition("=")[0].upper():
            raise _fail(_("it sets a password variable"), password_hint)
        words.pop(0)
    if not words:
        raise _fail(
            _("it only sets variables"), _("paste the SSH login your provider shows, {example}").format(example=_eg())
        )

    program = re.split(r"[/\\]", words[0])[-1].lower()
    if program in ("ssh", "ssh.exe"):
        found = _read_ssh_args(words[1:])
    elif len(words) == 1 and not words[0].startswith("-"):
        found = _Found()
        _apply_destination(found, words[0])
    else:
        raise _fail(
            _("{word} is not ssh").format(word=_short(words[0])),
            _("gpu-tui needs an SSH login, {example}").format(example=_eg()),
        )
    if found.host is None:
        raise _fail(_("it names no host"), _("add user@host, {example}").format(example=_eg()))
    user = found.user if found.user is not None else "root"
    port = found.port or 22
    host = found.hostname if found.hostname is not None else found.host
    _check_host(host)
    _check_user(user)
    if found.identity_file is not None and not found.identity_file.strip():
        raise _fail(_("-i names no key file"), _("write -i ~/.ssh/id_ed25519, or leave -i out"))
    return LoginSpec(host=host, port=port, user=user, identity_file=found.identity_file)


def guess_provider(host: str) -> str:
    """ "autodl" | "runpod" | "vast" from the host's domain; "generic" otherwise (raw IPs too)."""
    for provider, domains in _PROVIDER_DOMAINS.items():
        if any(_in_domain(host, d) for d in domains):
            return provider
    return "generic"


def _in_domain(host: str, domain: str) -> bool:
    name = host.lower().rstrip(".")
    return name == domain or name.endswith("." + domain)


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    return re.sub(r"-{2,}", "-", slug).strip("-.")


def _base_name(spec: LoginSpec, provider: str) -> str:
    labels = spec.host.lower().rstrip(".").split(".")
    if provider == "autodl":
        # connect.westb.seetacloud.com: the region is what tells two AutoDL machines apart
        domain = next((d for d in _PROVIDER_DOMAINS["autodl"] if _in_domain(spec.host, d)), "")
        sub = [lab for lab in labels[: len(labels) - len(domain.split("."))] if lab != "connect"] if domain else []
        parts = ["autodl", sub[-1] if sub else "", str(spec.port)]
    elif provider in ("runpod", "vast"):
        if spec.port != 22:
            detail = str(spec.port)
        elif provider == "runpod" and spec.user != "root":
            # RunPod's proxy logs in as <podid>-<hash>@ssh.runpod.io
            detail = spec.user.split("-")[0]
        else:
            detail = labels[0] if ":" not in spec.host else ""
        parts = [provider, detail]
    else:
        parts = [spec.host, str(spec.port) if spec.port != 22 else ""]
    return _slug("-".join(p for p in parts if p)) or "instance"


def suggest_name(spec: LoginSpec, provider: str, taken: set[str]) -> str:
    """A config-valid instance name such as `autodl-westb-23456`, `-2`, `-3`... when taken.

    Names are compared without case: the password's environment variable upper-cases them.
    """
    base = _base_name(spec, provider)[:_NAME_MAX].rstrip("-.") or "instance"
    used = {t.lower() for t in taken}
    if base.lower() not in used:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = base[: _NAME_MAX - len(suffix)].rstrip("-.") + suffix
        if candidate.lower() not in used:
            return candidate
        n += 1
