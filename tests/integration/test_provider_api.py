"""The provider API clients against loopback servers that answer as RunPod's, Vast.ai's and
AutoDL's documentation shows (tests/providerservers.py): parsing, start/stop with state
transitions, balances, a wrong token, a slow API, an API that is down."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from providerservers import ProviderServer
from pydantic import SecretStr

from gpu_tui.core.errors import AuthFailed, RemoteError, Unreachable
from gpu_tui.core.providers import ProviderInstance, import_fields, import_name
from gpu_tui.services.providers import client_for
from gpu_tui.services.providers.http import call_count

PROVIDERS = ("runpod", "vast", "autodl")


@pytest.fixture(params=PROVIDERS)
def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderServer]:
    srv = ProviderServer(request.param, token=f"{request.param}-key").start()
    if request.param == "runpod":
        monkeypatch.setenv("GPU_TUI_RUNPOD_GRAPHQL", srv.graphql_url)
    srv.add("1001", name="train-a", state="running", ssh=("127.0.0.1", 40022), price=0.74, gpus=2)
    srv.add("1002", name="", state="stopped", ssh=("127.0.0.1", 40023), price=0.35)
    try:
        yield srv
    finally:
        srv.stop()


def client(srv: ProviderServer, token: str | None = None, **kw: float):
    return client_for(srv.provider, SecretStr(token or srv.token), base=srv.url, **kw)


async def test_list_parses_status_gpu_price_and_endpoint(server: ProviderServer) -> None:
    listed = {i.id: i for i in await client(server).list_instances()}
    currency = "¥" if server.provider == "autodl" else "$"
    running, stopped = listed["1001"], listed["1002"]
    assert running == ProviderInstance(
        server.provider,
        "1001",
        "train-a",
        "running",
        running.raw_status,
        "2x RTX 4090",
        pytest.approx(0.74),
        currency,
        "127.0.0.1",
        40022,
        "root",
    )
    assert stopped.status == "stopped" and stopped.ssh_host is None or server.provider == "vast"
    assert stopped.status == "stopped" and stopped.price_per_hour == pytest.approx(0.35)
    # the token travels in the Authorization header only, never in a URL
    assert all(server.token not in path for _m, path in server.seen)
    want = server.token if server.provider == "autodl" else f"Bearer {server.token}"
    assert set(server.auth_seen) == {want}


async def test_start_goes_through_starting_to_running(server: ProviderServer) -> None:
    c = client(server)
    await c.start("1002")
    assert server.instances["1002"].starts == 1
    states = [(await c.get("1002")).status for _ in range(3)]
    assert states[0] == "starting" and states[-1] == "running", states
    assert (await c.get("1002")).ssh_port == 40023
    await c.stop("1002")
    seen = [(await c.get("1002")).status for _ in range(2)]
    assert seen[-1] == "stopped" and server.instances["1002"].stops == 1


async def test_balance(server: ProviderServer) -> None:
    b = await client(server).balance()
    assert b.provider == server.provider and b.balance == pytest.approx(42.5)
    if server.provider == "runpod":
        assert b.spend_per_hour == pytest.approx(0.69) and b.hours_left() == pytest.approx(42.5 / 0.69)


async def test_wrong_token_is_auth_failed_with_the_providers_words(server: ProviderServer) -> None:
    with pytest.raises(AuthFailed) as err:
        await client(server, token="wrong").list_instances()
    words = {"runpod": "invalid API key", "vast": "Invalid API key", "autodl": "token 无效"}[server.provider]
    assert words in err.value.message and "wrong" not in err.value.message


async def test_api_down_is_retried_for_reads_only_then_one_error(server: ProviderServer) -> None:
    server.down = True
    before = len(server.seen)
    with pytest.raises(RemoteError, match="503"):
        await client(server).list_instances()
    assert len(server.seen) - before == 3  # one try and two retries: a read
    before = len(server.seen)
    with pytest.raises(RemoteError, match="503"):
        await client(server).start("1002")
    assert len(server.seen) - before == 1  # a power-on is never sent twice


async def test_slow_api_times_out_and_nothing_answering_is_unreachable(server: ProviderServer) -> None:
    server.delay = 2.0
    sent = call_count()
    with pytest.raises(Unreachable):
        await client_for(server.provider, SecretStr(server.token), base=server.url, timeout=0.3).start("1001")
    with pytest.raises(Unreachable):
        await client_for(server.provider, SecretStr(server.token), base="http://127.0.0.1:9", timeout=1).start("1")
    assert call_count() - sent == 2  # counted though unanswered, and a start is never retried


def test_import_fields_and_names() -> None:
    pi = ProviderInstance("runpod", "xedezhzb9la3ye", "My Train!", "stopped", "EXITED", "1x A40", 0.39, "$")
    name = import_name(pi, {"runpod-my-train"})
    assert name == "runpod-my-train-2"
    fields = import_fields(pi, name=name, settings_currency="¥")
    assert fields == {
        "name": name,
        "host": "pending.invalid",
        "provider": "runpod",
        "provider_id": "xedezhzb9la3ye",
        "user": "root",
        "hourly_rate": 0.39,
        "currency": "$",
    }
    assert "currency" not in import_fields(pi, name=name, settings_currency="$")
