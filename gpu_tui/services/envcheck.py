"""Run the environment check on an instance: one shell probe, then torch/paddle in the chosen python.

The probe is one `sh -c` exec of builtins and short commands (nvidia-smi, python3 --version,
conda discovery, df, /proc/meminfo), each bounded by the command timeout; importing torch can
take many seconds, so it is a second exec with its own timeout, in the env's own python (no
`conda activate`). A missing tool is a failed check, never an exception.
"""

from __future__ import annotations

import posixpath

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.bilingual import say
from gpu_tui.core.env.check import RC, SECTION, EnvFacts, PyModule, parse_module, parse_probe
from gpu_tui.core.env.mirrors import conda_channel_url, pip_index_url, probe_path
from gpu_tui.core.errors import CommandTimeout
from gpu_tui.core.i18n import N_
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import quote, remote_path, sh_c
from gpu_tui.services.conda import FIND_CONDA_SCRIPT, resolve_env
from gpu_tui.services.mirrors import PROBE_TIMEOUT, probe_urls

__all__ = ["probe_script", "check_environment", "MODULE_PROBE"]

DATA_DISKS = ("/root/autodl-tmp", "/root/autodl-fs")  # AutoDL's data disk and network storage

# one JSON line: version, whether CUDA is usable, the CUDA it was built for; or the import error
MODULE_PROBE = {
    "torch": (
        "import json\n"
        "try:\n import torch\nexcept Exception as e:\n print(json.dumps({'error': type(e).__name__ + ': ' + str(e)}))\n"
        "else:\n print(json.dumps({'version': torch.__version__, 'cuda_available': torch.cuda.is_available(),"
        " 'cuda': torch.version.cuda, 'hip': getattr(torch.version, 'hip', None)}))\n"
    ),
    "paddle": (
        "import json, importlib.util\n"
        "if importlib.util.find_spec('paddle') is None:\n print(json.dumps({'error': 'absent'}))\n"
        "else:\n import paddle\n print(json.dumps({'version': paddle.__version__,"
        " 'cuda_available': paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0}))\n"
    ),
}


def probe_script(inst: InstanceConfig) -> str:
    disks = ["/", *DATA_DISKS]
    if inst.workdir:
        disks.append(inst.workdir)
    disk_words = " ".join(remote_path(d) for d in dict.fromkeys(disks))
    return f"""
echo "{SECTION} nvsmi"; nvidia-smi --query-gpu=name --format=csv,noheader 2>&1; echo "{RC} $?"
echo "{SECTION} nvsmi_version"; nvidia-smi --version 2>/dev/null || nvidia-smi 2>/dev/null | head -n 5
echo "{SECTION} amd"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  if command -v amd-smi >/dev/null 2>&1; then echo "tool amd-smi"; amd-smi version 2>&1 | head -n 3
  elif command -v rocm-smi >/dev/null 2>&1; then echo "tool rocm-smi"; rocm-smi --showdriverversion 2>&1 | head -n 8; fi
  [ -r /opt/rocm/.info/version ] && echo "rocm $(cat /opt/rocm/.info/version)"
  [ -r /sys/module/amdgpu/version ] && echo "amdgpu $(cat /sys/module/amdgpu/version)"
fi
echo "{SECTION} python"; python3 --version 2>&1; echo "{RC} $?"
echo "{SECTION} conda"; c=$( {FIND_CONDA_SCRIPT} ); if [ -n "$c" ]; then echo "$c"; "$c" --version 2>&1 | head -n 1; fi
echo "{SECTION} conda_init"
for f in "$HOME/.bashrc" "$HOME/.zshrc"; do grep -qs ">>> conda initialize >>>" "$f" && echo "$f"; done
echo "{SECTION} disks"
for p in {disk_words}; do [ -d "$p" ] && df -Pk "$p" 2>/dev/null | tail -n 1 | sed "s|^|$p |"; done
echo "{SECTION} mem"; grep -E '^(MemTotal|MemAvailable):' /proc/meminfo
echo "{SECTION} condarc_user"; cat "$HOME/.condarc" 2>/dev/null
echo "{SECTION} condarc_root"; [ -n "$c" ] && cat "$(dirname "$(dirname "$c")")/.condarc" 2>/dev/null
for p in /etc/xdg/pip/pip.conf /etc/pip.conf "$HOME/.pip/pip.conf" \
    "${{XDG_CONFIG_HOME:-$HOME/.config}}/pip/pip.conf"; do
  echo "{SECTION} pipconf"; cat "$p" 2>/dev/null
done
echo "{SECTION} pip_env"; echo "${{PIP_INDEX_URL:-}}"
exit 0
"""


async def _module(host: Host, python: str, name: str, timeout: float) -> PyModule:
    try:
        res = await host.run(f"{python} -c {quote(MODULE_PROBE[name])} 2>&1", timeout=timeout)
    except CommandTimeout:
        return PyModule(error=say(N_("importing {module} took over {seconds:g} s"), module=name, seconds=timeout))
    return parse_module(res.stdout)


async def check_environment(
    host: Host,
    inst: InstanceConfig,
    env: str | None = None,
    *,
    import_timeout: float = 90.0,
    index_timeout: float = PROBE_TIMEOUT,
) -> EnvFacts:
    """Probe the instance; with `env`, torch/paddle are checked in that conda env (InputError if
    it does not exist), else in conda's base where conda exists, else python3 on PATH. The
    index conda and pip use is asked from the instance, each within `index_timeout` seconds."""
    prefix = await resolve_env(host, env) if env else None
    res = await host.run(sh_c(probe_script(inst)), timeout=60)
    facts = parse_probe(res.stdout)
    if prefix:
        python, facts.python_checked = quote(posixpath.join(prefix, "bin", "python")), say(N_("env {env}"), env=env)
    elif facts.conda_path:
        base = posixpath.dirname(posixpath.dirname(facts.conda_path))
        python, facts.python_checked = quote(posixpath.join(base, "bin", "python")), say(N_("conda base"))
    else:
        python, facts.python_checked = "python3", say(N_("python3 on PATH"))
    facts.torch = await _module(host, python, "torch", import_timeout)
    paddle = await _module(host, python, "paddle", import_timeout)
    facts.paddle = None if paddle.error else paddle
    facts.indexes = await probe_urls(host, _index_urls(facts), timeout=index_timeout)
    return facts


def _index_urls(facts: EnvFacts) -> list[tuple[str, str]]:
    """The (tool, URL) pairs to ask: the first channel conda uses (where there is a conda) and pip's index."""
    urls = [("pip", probe_path("pip", pip_index_url(facts.pip_conf_texts, facts.pip_env_index)))]
    if facts.conda_path:
        urls.insert(0, ("conda", probe_path("conda", conda_channel_url(facts.condarc_texts))))
    return urls
