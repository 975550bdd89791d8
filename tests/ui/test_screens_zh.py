"""Every screen of gpu_tui/ui/screens in zh-CN at 80x24: a few key Chinese words are on screen
(or in its footer's bindings) and the English UI words of that screen are gone.

The screens the demo offers (detail, job log, environment check, conda, its forms and
confirmations) are opened from the demo fleet; the others are pushed with fixed inputs into a
small host app (no sshd). What is checked is what the terminal shows, cut where it is cut.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.text import Text
from stubhost import StubHost
from textual.app import App
from textual.screen import Screen
from textual.widgets import Input, Label

from gpu_tui.config.language import catalog
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, SyncConfig, parse_settings
from gpu_tui.core import i18n
from gpu_tui.core.errors import ConfigError
from gpu_tui.remote.host import CommandResult
from gpu_tui.services.billing import Billing
from gpu_tui.services.ledger import Ledger
from gpu_tui.services.onboard import Onboarder
from gpu_tui.services.power import ShutdownResult
from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.screens import HelpScreen, PasswordScreen, TrustKeyScreen, WelcomeScreen
from gpu_tui.ui.screens.add import AddInstanceScreen
from gpu_tui.ui.screens.conda import CondaScreen
from gpu_tui.ui.screens.conda_forms import CondaForm
from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.cost import CostScreen
from gpu_tui.ui.screens.detail import DetailScreen
from gpu_tui.ui.screens.edit import EditInstanceScreen
from gpu_tui.ui.screens.env_check import EnvCheckScreen
from gpu_tui.ui.screens.job_log import JobLogScreen
from gpu_tui.ui.screens.power import QuitGuardScreen, ShutdownConfirmScreen, ShutdownReportScreen
from gpu_tui.ui.screens.run_job import RunJobScreen
from gpu_tui.ui.screens.sync import SyncScreen

SIZE = (80, 24)
FIXED_CLOCK = 1_796_000_000.0


@pytest.fixture(autouse=True)
def zh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GPU_TUI_LANG", "zh-CN")  # what build_app reads
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        yield


class Holder(App[None]):
    """Pushes the screen `make` builds (built here, so under the language in force)."""

    def __init__(self, make: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self._make = make

    def on_mount(self) -> None:
        self.push_screen(self._make())


@asynccontextmanager
async def hosted(make: Callable[[], Screen[Any]]) -> AsyncIterator[tuple[App[Any], Any]]:
    app = Holder(make)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot


def shown(app: App[Any]) -> str:
    """The terminal's text, as the user sees it, and the footer words of the screen's bindings."""
    lines = [strip.text for strip in app.screen._compositor.render_strips()]
    footer = [b.binding.description for b in app.screen.active_bindings.values() if b.binding.show]
    return "\n".join(lines) + "\n[footer] " + "  ".join(footer)


def check(app: App[Any], chinese: list[str], english: list[str]) -> str:
    text = shown(app)
    missing = [w for w in chinese if w not in text]
    left = [w for w in english if w in text]
    assert not missing and not left, f"missing {missing}, English left {left}:\n{text}"
    return text


def labels_fit(screen: Screen[Any]) -> None:
    for label in screen.query(".row > Label").results(Label):
        assert label.size.width > cell_len(str(label.content)), str(label.content)


# ----- pushed with fixed inputs


async def test_welcome() -> None:
    async with hosted(lambda: WelcomeScreen("/root/.config/gpu-tui/config.toml")) as (app, _pilot):
        check(
            app, ["欢迎使用 gpu-tui", "演示实例 (d)", "本机", "添加实例"], ["Welcome", "Demo fleet", "Add an instance"]
        )


async def test_add_form(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "config.toml", tmp_path / "data", tmp_path / "log", tmp_path / "no-ssh", tmp_path / "kh")
    onboarder = Onboarder(parse_settings(""), paths, SecretStore(environ={}))
    async with hosted(lambda: AddInstanceScreen(onboarder)) as (app, pilot):
        check(
            app,
            ["添加实例", "登录命令", "¥/时", "按主机地址判断", "测试并添加", "系统钥匙串"],
            ["Login", "Password", "Test and add", "keyring", "Provider"],
        )
        labels_fit(app.screen)
        app.screen.query_one("#login", Input).value = "ssh -p 22 root@box.example"
        app.screen.query_one("#name", Input).value = "no spaces please"
        await pilot.press("enter")
        await pilot.pause()
        check(app, ["名称 'no spaces please': 只能用"], ["letters, digits"])


async def test_edit_form() -> None:
    inst = InstanceConfig(
        name="box",
        host="box.example",
        port=2222,
        hourly_rate=1.98,
        sync=SyncConfig(local="/home/me/proj", exclude=(".git",)),
    )

    def refuse(_name: str, _fields: dict[str, Any]) -> InstanceConfig:
        raise ConfigError("no")

    async with hosted(lambda: EditInstanceScreen(inst, refuse)) as (app, _pilot):
        check(
            app,
            ["编辑 box", "每小时价格", "本地同步目录", "远程同步目录", "保存", "取消"],
            ["Price/hour", "Sync local", "Save", "Workdir"],
        )
        labels_fit(app.screen)


async def test_run_job_form() -> None:
    async def no_conda() -> None:
        return None

    async def start(req: Any, asked: Any = None) -> Any:
        return req

    async with hosted(lambda: RunJobScreen("box", "/root/autodl-tmp", no_conda, start)) as (app, pilot):
        await pilot.pause(0.3)
        check(
            app,
            ["在 box 上运行任务", "命令", "conda 环境", "(不用 conda 环境)", "开始"],
            ["Command", "Directory", "Start", "no conda env"],
        )
        labels_fit(app.screen)
        await pilot.press("enter")  # no command yet
        await pilot.pause()
        check(app, ["请先输入要运行的命令"], ["Type the command"])


async def test_run_job_form_on_a_slurm_login_node() -> None:
    async def no_conda() -> None:
        return None

    async def start(req: Any, asked: Any = None) -> Any:
        return req

    async with hosted(lambda: RunJobScreen("lab", None, no_conda, start, ("2", "gpu", "04:00:00"))) as (app, pilot):
        await pilot.pause(0.3)
        check(app, ["在 lab 上运行任务", "GPU", "分区", "时限"], ["Partition", "tmux attach"])
        labels_fit(app.screen)


async def test_confirm_help_hostkey_password() -> None:
    async with hosted(lambda: ConfirmScreen("停止任务?", yes="停止")) as (app, _pilot):
        check(app, ["停止 (y)", "否 (n)", "[footer] 否  否  是"], ["No (n)", "Yes"])
    rows = [("q", "quit", "退出"), ("?", "help", "每个按键")]
    async with hosted(lambda: HelpScreen(rows)) as (app, _pilot):
        check(app, ["按键", "动作 id", "命令面板", "关闭"], ["Keys", "command palette", "Close"])
    fp = "SHA256:4f1c2d5ce0b1a7f3e9b6a1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e"
    async with hosted(lambda: TrustKeyScreen("box", "box.example:22", fp, True)) as (app, _pilot):
        check(app, ["主机密钥已变", "可能是攻击", "信任此密钥", fp], ["HOST KEY CHANGED", "Trust", "attack"])
    async with hosted(lambda: TrustKeyScreen("box", "box.example:22", fp, False)) as (app, _pilot):
        check(app, ["未知主机密钥", "之前没有连接过 box.example:22"], ["Unknown host key", "seen before"])
    async with hosted(lambda: PasswordScreen("box", "root@box.example:22", None, can_save=True)) as (app, pilot):
        check(
            app,
            ["box 的密码", "服务商控制台里的密码", "存入系统钥匙串", "连接"],
            ["Password for", "Connect", "keyring"],
        )
        await pilot.press("enter")  # nothing typed
        await pilot.pause()
        assert any("请先输入密码" in str(n.message) for n in app._notifications)


async def test_power_screens() -> None:
    async with hosted(lambda: QuitGuardScreen(["autodl-4090", "h100-box"], "¥11.98/时", can_pull=True)) as (app, _p):
        check(
            app,
            ["仍在计费", "autodl-4090, h100-box", "退出 gpu-tui 不会让它们关机", "返回 (esc)", "全部关机"],
            ["still billing", "Quit anyway", "Stay", "Shut all down"],
        )
    async with hosted(lambda: ShutdownConfirmScreen(Text("关机 box?"), can_pull=True)) as (app, _p):
        check(app, ["先下载结果再关机 (p)", "关机 (y)", "取消 (n)"], ["Shut down", "Cancel", "Pull"])
    results = [
        ShutdownResult("a-box", True, "stopped (verified in 1.2 s)", 1.2),
        ShutdownResult("b", False, "shutdown failed: refused", 0.5),
    ]
    async with hosted(lambda: ShutdownReportScreen(results)) as (app, _pilot):
        text = check(app, ["1 个没有关机: 可能仍在计费", "关闭 (enter)"], ["NOT shut down", "Close"])
        # the marks are as wide as each other: the names line up
        assert text.index("正常  a-box") - text.rfind("\n", 0, text.index("正常")) == text.index(
            "失败  b"
        ) - text.rfind("\n", 0, text.index("失败  b"))


async def test_cost_screen(tmp_path: Path) -> None:
    now = datetime(2025, 3, 12, 15, 0).timestamp()
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        ledger.observe("autodl-4090", 7200, 1.98, now)
        ledger.observe("h100-box", 5 * 3600, 10.0, now - 2 * 86400)
    async with hosted(lambda: CostScreen(Billing(tmp_path / "ledger.sqlite3"), "¥", lambda: now)) as (app, _pilot):
        text = check(
            app,
            ["花费", "实例", "单价", "今天", "本周", "本月", "累计", "合计", "每天花费 ¥, 近 14 天"],
            ["instance", "today", "all time", "per day", "total"],
        )
        assert all(cell_len(line) <= 80 for line in text.splitlines())


class PathsHost(StubHost):
    """Answers the sync screen's probe ($HOME, rsync's version) and nothing else."""

    name = "box"

    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        return CommandResult(0, "/root\nrsync  version 3.2.7  protocol version 31\n", "")


async def test_sync_screen(tmp_path: Path) -> None:
    inst = InstanceConfig(
        name="box", host="box.example", workdir="/root/autodl-tmp", sync=SyncConfig(local=str(tmp_path))
    )
    async with hosted(lambda: SyncScreen(inst, PathsHost())) as (app, pilot):
        await pilot.pause(0.2)
        check(
            app,
            ["同步 box", "本地  ", "远程  box:/root/autodl-tmp", "排除 .git", "上传  本地 → 远程", "接收端不会删除"],
            ["LOCAL", "REMOTE", "exclude", "Push", "Pull", "nothing is deleted"],
        )


# ----- from the demo fleet


async def wait_screen(pilot: Any, kind: type, pred: Callable[[], bool] = lambda: True, timeout: float = 15.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if isinstance(pilot.app.screen, kind) and pred():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"no {kind.__name__}:\n{shown(pilot.app)}")


async def test_demo_screens() -> None:
    app = build_app(demo_source(seed=0, clock=lambda: FIXED_CLOCK), clock=lambda: FIXED_CLOCK)
    async with app.run_test(size=SIZE) as pilot:

        def ready() -> bool:  # the first instance (autodl-4090-train) is up with its GPU and its job
            fleet = app.dashboard.fleet
            view = fleet.views.get("autodl-4090-train") if fleet is not None else None
            return view is not None and view.frame is not None and view.jobs_listed

        await wait_screen(pilot, Screen, ready)
        await pilot.press("enter")
        await wait_screen(pilot, DetailScreen)
        check(
            app,
            ["GPU 利用率 %", "已用显存 GiB", "秒前", "GPU 0", "返回"],
            ["utilisation", "seconds ago", "VRAM", "Back"],
        )
        await pilot.press("escape", "l")
        await wait_screen(pilot, JobLogScreen, lambda: "行, " in shown(app))
        check(app, ["运行中", "行, ", "停止任务", "返回"], ["Stop job", " lines,", "Back"])
        await pilot.press("x")
        await wait_screen(pilot, ConfirmScreen)
        check(app, ["否 (n)"], ["No (n)"])
        await pilot.press("n", "escape", "c")
        await wait_screen(pilot, EnvCheckScreen, lambda: "项待修复" in shown(app))
        check(
            app,
            ["torch 所在环境", "(默认 python)", "的环境", "正常", "重新检查"],
            ["torch checked in", "default python", "to fix", "Check again"],
        )
        await pilot.press("escape", "e")
        await wait_screen(pilot, CondaScreen, lambda: "/root/miniconda3/envs/llm" in shown(app))
        check(
            app, ["上的 conda", "环境", "大小", "路径", "新建", "刷新"], ["size", "path", "New env", "Refresh", "Back"]
        )
        await pilot.press("n")
        await wait_screen(pilot, CondaForm)
        check(app, ["新建 conda 环境", "名称", "字母、数字", "创建", "取消"], ["Name", "Create", "Cancel", "letters"])
        labels_fit(app.screen)
        await pilot.press("escape", "down", "i")
        await wait_screen(pilot, CondaForm)
        check(app, ["安装到", "包", "用 pip", "安装"], ["Packages", "Install", "with pip"])
        await pilot.press("escape", "d")
        await wait_screen(pilot, ConfirmScreen)
        check(app, ["删除", "上的 conda 环境", "及其中安装的所有内容", "删除 (y)"], ["Remove", "deletes"])
        await pilot.press("n")
