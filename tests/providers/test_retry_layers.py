"""One retry layer and timeouts that tell connecting from waiting for a long answer, on the
wire with the official SDKs: a client the user gives does not retry under the library's
retries, and a model call is not sent again after a read timeout (it may have been run
and billed), while a connection that never opens is tried again."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import anthropic
import openai
import pytest

from handoffs import Agent, Runner, Team
from handoffs.models.anthropic import AnthropicModel
from handoffs.models.openai import OpenAIModel
from handoffs.models.retry import RetryPolicy
from wire import anthropic_api
from wire.clients import FAST
from wire.openai_api import completion, status, stream
from wire.server import FakeServer, Reply

SOLO = Team([Agent("solo")])
FAILING = {"retry-after-ms": "5"}  # both the SDKs and the library wait 5 ms between tries


def persistent_500(server: FakeServer, body: object) -> None:
    server.add(*[Reply(500, body, headers=FAILING)] * 30)


async def test_a_given_openai_client_does_not_retry_under_the_librarys_retries(
        openai_server: FakeServer) -> None:
    persistent_500(openai_server, status(500, "boom").body)
    client = openai.AsyncOpenAI(base_url=openai_server.url + "/v1", api_key="k",
                                max_retries=2)
    model = OpenAIModel("gpt-test", client=client, retry=FAST)

    result = await Runner(SOLO, model=model).run("s1", "hi")

    assert result.error is not None and result.error.code == "model_error"
    assert len(openai_server.received) == 4  # 1 + max_retries, not 3 x 4
    assert "gave up after 4 attempts" in result.error.message


async def test_a_given_anthropic_client_does_not_retry_under_the_librarys_retries(
        anthropic_server: FakeServer) -> None:
    persistent_500(anthropic_server, anthropic_api.error(500, "boom"))
    client = anthropic.AsyncAnthropic(base_url=anthropic_server.url, api_key="k",
                                      max_retries=2)
    model = AnthropicModel("claude-test", client=client, retry=FAST)

    result = await Runner(SOLO, model=model).run("s1", "hi")

    assert result.error is not None and len(anthropic_server.received) == 4


async def test_with_library_retries_off_the_given_client_retries_itself(
        openai_server: FakeServer) -> None:
    persistent_500(openai_server, status(500, "boom").body)
    client = openai.AsyncOpenAI(base_url=openai_server.url + "/v1", api_key="k",
                                max_retries=2)

    result = await Runner(SOLO, model=OpenAIModel("gpt-test", client=client,
                                                  max_retries=0)).run("s1", "hi")

    assert result.error is not None and len(openai_server.received) == 3


async def test_a_read_timeout_is_not_sent_again(openai_server: FakeServer) -> None:
    openai_server.add(Reply(body=completion("too late").body, delay=10.0),
                      completion("a second, billed answer"))
    model = OpenAIModel("gpt-test", base_url=openai_server.url + "/v1", api_key="k",
                        timeout=1.0, retry=FAST)

    result = await Runner(SOLO, model=model).run("s1", "think hard")

    assert result.error is not None and result.error.code == "timeout"
    assert "not sent again" in result.error.message
    assert len(openai_server.received) == 1


async def test_a_streamed_call_that_times_out_before_its_first_byte_is_not_sent_again(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(Reply(events=anthropic_api.stream(["late"]).events, delay=10.0),
                         anthropic_api.stream(["again"]))
    model = AnthropicModel("claude-test", base_url=anthropic_server.url, api_key="k",
                           timeout=1.0, retry=FAST)

    events = [e async for e in Runner(SOLO, model=model).stream("s1", "think hard")]

    assert events[-1].type == "run_failed" and events[-1]["code"] == "timeout"
    assert len(anthropic_server.received) == 1


async def test_read_timeouts_are_retried_when_the_user_opts_in(
        openai_server: FakeServer) -> None:
    openai_server.add(Reply(events=stream(["late"]).events, delay=10.0), stream(["in time"]))
    policy = RetryPolicy(max_retries=3, base_delay=0.01, retry_read_timeouts=True)
    model = OpenAIModel("gpt-test", base_url=openai_server.url + "/v1", api_key="k",
                        timeout=1.0, retry=policy)

    events = [e async for e in Runner(SOLO, model=model).stream("s1", "hi")]

    assert events[-1].result.output == "in time"
    assert len(openai_server.received) == 2


@pytest.fixture
def unanswered_port() -> Iterator[int]:
    """A port whose listener never accepts and whose queue is full: a connection to it
    never opens (the kernel drops the handshake)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        fillers.append(s)
    yield port
    for s in fillers:
        s.close()
    listener.close()


async def test_a_connect_timeout_is_retried_with_its_own_short_limit(
        unanswered_port: int) -> None:
    model = OpenAIModel("gpt-test", base_url=f"http://127.0.0.1:{unanswered_port}/v1",
                        api_key="k", connect_timeout=0.2, timeout=60, retry=FAST)

    result = await Runner(SOLO, model=model).run("s1", "hi")

    assert result.error is not None and result.error.code == "timeout"
    assert "gave up after 4 attempts" in result.error.message  # nothing was sent: retried
