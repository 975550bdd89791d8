"""The fake conda (tests/fakes/conda) every simulated instance has in ~/miniconda3, through real SSH.

Like on a rented machine it is NOT on PATH for ``ssh host cmd`` (and CONDA_EXE is unset): these
tests run it by its full path, as gpu-tui must after probing the known locations.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import sshd as sshd_lib
from sshhelp import ssh_host

pytestmark = pytest.mark.sshd

CONDA = "~/miniconda3/bin/conda"


async def connected(inst, tmp_path: Path, user: str = "root"):
    if user == "root":
        host = ssh_host(inst, tmp_path)
    else:
        host = ssh_host(inst, tmp_path, user=user, password=inst.password, use_key=False)
    await host.connect()
    return host


async def test_conda_is_in_home_but_not_on_path(sshd_instance, tmp_path: Path) -> None:
    inst = sshd_instance
    host = await connected(inst, tmp_path)
    try:
        res = await host.run('command -v conda; echo "rc=$? CONDA_EXE=${CONDA_EXE-unset}"')
        assert res.stdout.strip() == "rc=1 CONDA_EXE=unset"
        res = await host.run(f"{CONDA} --version && test -x ~/miniconda3/bin/python && ls ~/miniconda3/envs")
        assert res.ok, res.stderr
        assert res.stdout.split() == ["conda", sshd_lib.CONDA_VERSION, "llm", "py311"]
        # bin/python is a real interpreter
        res = await host.run("~/miniconda3/envs/py311/bin/python -c 'print(6*7)'")
        assert res.stdout.strip() == "42"
    finally:
        await host.close()
    assert inst.conda_root() == inst.home() / "miniconda3"
    assert inst.conda_envs() == ["base", "llm", "py311"]


async def test_env_list(sshd_instance, tmp_path: Path) -> None:
    inst = sshd_instance
    root = str(inst.conda_root())
    expected = [root, f"{root}/envs/llm", f"{root}/envs/py311"]
    host = await connected(inst, tmp_path)
    try:
        listed = await host.run(f"{CONDA} env list --json")
        text = await host.run(f"{CONDA} env list")
    finally:
        await host.close()
    assert listed.ok and json.loads(listed.stdout) == {"envs": expected}
    assert listed.stdout.startswith('{\n  "envs": [\n    "')  # pretty-printed like conda
    lines = text.stdout.splitlines()
    assert lines[:2] == ["# conda environments:", "#"]
    rows = [ln.split() for ln in lines[2:] if ln.strip()]
    assert rows == [["base", root], ["llm", expected[1]], ["py311", expected[2]]]  # nothing active: no "*"


async def test_create_install_remove_round_trip(sshd_instance, tmp_path: Path) -> None:
    inst = sshd_instance
    root = inst.conda_root()
    host = await connected(inst, tmp_path)
    try:
        created = await host.run(f"{CONDA} create -n demo python=3.11 -y")
        assert created.ok, created.stderr
        assert "Executing transaction: done" in created.stdout and "conda activate demo" in created.stdout
        assert inst.conda_envs() == ["base", "demo", "llm", "py311"]
        assert (root / "envs/demo/bin/python").exists()
        assert "python=3.11" in (root / "envs/demo/conda-meta/history").read_text()

        # Without -y conda prompts and reads stdin (SshHost.run without stdin keeps it open: it would
        # wait, as real conda does); an empty answer takes the default, here "no".
        again = await host.run(f"{CONDA} create -n demo python=3.11", timeout=10, stdin="\n")
        assert again.exit_status == 1 and "CondaSystemExit: Exiting." in again.stderr
        assert "A conda environment already exists" in again.stdout

        inst_ = await host.run(f"{CONDA} install -n demo numpy -y")
        assert inst_.ok, inst_.stderr
        assert "The following NEW packages will be INSTALLED:" in inst_.stdout
        pkgs = inst.conda_packages("demo")
        assert pkgs["python"].startswith("3.11.") and f"numpy-{pkgs['numpy']}-" in inst_.stdout

        base = await host.run(f"{CONDA} env remove -n base -y")
        assert base.exit_status == 1 and "CondaEnvironmentError" in base.stderr
        removed = await host.run(f"{CONDA} env remove -n demo -y")
        assert removed.ok and not (root / "envs/demo").exists()
        assert inst.conda_envs() == ["base", "llm", "py311"]
        gone = await host.run(f"{CONDA} env remove -n demo -y")
        assert gone.exit_status == 1 and "EnvironmentLocationNotFound" in gone.stderr
        unknown = await host.run(f"{CONDA} search numpy")
        assert unknown.exit_status == 2 and "conda: error: argument verb: invalid choice: 'search'" in unknown.stderr
    finally:
        await host.close()


async def test_slow_create_is_visible_midway(sshd_instance, tmp_path: Path) -> None:
    inst = sshd_instance
    inst.set_conda_delay(0.6)
    host = await connected(inst, tmp_path)
    try:
        seen: list[str] = []
        saw_midway = False
        async with host.stream(f"{CONDA} create -n slow python=3.10 -y") as lines:
            async for line in lines:
                seen.append(line)
                if line == "Downloading and Extracting Packages:":
                    assert "slow" not in inst.conda_envs()  # not an env until the transaction ran
                    saw_midway = True
            assert lines.exit_status in (0, None)
        assert saw_midway and "Executing transaction: done" in seen
        for _ in range(50):
            if "slow" in inst.conda_envs():
                break
            await asyncio.sleep(0.02)
        assert "slow" in inst.conda_envs()
    finally:
        await host.close()


async def test_init_and_version(sshd_instance, tmp_path: Path) -> None:
    inst = sshd_instance
    host = await connected(inst, tmp_path)
    try:
        first = await host.run(f"{CONDA} init bash")
        second = await host.run(f"{CONDA} init bash")
        assert first.ok and f"modified      {inst.home()}/.bashrc" in first.stdout
        assert second.ok and "No action taken." in second.stdout
        bashrc = (inst.home() / ".bashrc").read_text()
        assert bashrc.count("# >>> conda initialize >>>") == 1 and bashrc.count("# <<< conda initialize <<<") == 1
        # Still nothing for `ssh host cmd` (~/.bashrc returns before the block)
        assert (await host.run("command -v conda")).exit_status == 1

        inst.set_conda_version("23.7.4")
        old = await host.run(f"{CONDA} --version")
        assert old.stdout.strip() == "conda 23.7.4"
    finally:
        await host.close()


async def test_password_user_has_its_own_copy(sshd_instance, password_user, tmp_path: Path) -> None:
    inst = sshd_instance
    user = password_user.name
    root = inst.conda_root(user)
    assert root == inst.home(user) / "miniconda3" and root != inst.conda_root()
    host = await connected(inst, tmp_path, user=user)
    try:
        res = await host.run(f"command -v conda; {CONDA} env list --json; stat -c %U ~/miniconda3/envs/llm/bin")
        assert res.ok, res.stderr
        listing, owner = res.stdout.rsplit("}", 1)
        assert json.loads(listing + "}")["envs"][0] == str(root)
        assert owner.strip() == user
        # A bare `conda create` makes an env without python, as real conda does.
        bare = await host.run(f"{CONDA} create -n mine -y && ~/miniconda3/envs/mine/bin/python -V")
        assert bare.exit_status == 127 and "No such file or directory" in bare.stderr
        made = await host.run(
            f"{CONDA} install -n mine python=3.11 -y && "
            "~/miniconda3/envs/mine/bin/python -c 'import os; print(os.getuid())'"
        )
        assert made.ok, made.stderr
        assert made.stdout.split()[-1] == str(password_user.uid)
    finally:
        await host.close()
    assert inst.conda_envs(user) == ["base", "llm", "mine", "py311"]
    assert inst.conda_envs() == ["base", "llm", "py311"]


async def test_set_conda_moves_and_removes_the_install(sshd_instance, tmp_path: Path) -> None:
    inst = sshd_instance
    inst.add_conda_env("extra", "3.12")
    inst.set_conda(location="anaconda3")
    assert inst.conda_location() == "anaconda3" and inst.conda_envs() == ["base", "extra", "llm", "py311"]
    host = await connected(inst, tmp_path)
    try:
        res = await host.run("test -e ~/miniconda3; echo $?; ~/anaconda3/bin/conda env list")
        assert res.stdout.split()[:4] == ["1", "#", "conda", "environments:"]
        assert ["extra", f"{inst.home()}/anaconda3/envs/extra"] in [ln.split() for ln in res.stdout.splitlines()]
        inst.set_conda(False)
        res = await host.run("ls -d ~/miniconda3 ~/anaconda3 ~/miniforge3 2>/dev/null; echo done")
        assert res.stdout.strip() == "done"
        assert inst.conda_location() is None and inst.conda_location(inst.users[-1]) is None
        with pytest.raises(sshd_lib.SshdError):
            inst.conda_root()
        inst.set_conda(location="miniforge3", user="root")
        res = await host.run("~/miniforge3/bin/conda env list --json")
        assert json.loads(res.stdout)["envs"][0] == str(inst.home() / "miniforge3")
    finally:
        await host.close()
