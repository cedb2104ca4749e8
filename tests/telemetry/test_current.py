"""handoffs' spans are the *current* spans while the work they stand for runs, so other
instrumentations' spans (OpenTelemetry's httpx and sqlite3 instrumentations here, on a
real HTTP server and a real database file) and log records land under them: an HTTP call
of the model under `chat`, a query of a tool under `execute_tool`, across asyncio tasks
(concurrent tools, concurrent delegates) and threads (a tool's `asyncio.to_thread`).
A tool that raises leaves its exception, with the stack trace, on its span."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor, HTTPXClientInstrumentor
from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from handoffs import Agent, Handoff, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer
from wire.clients import openai_model
from wire.openai_api import completion, stream, tool_call
from wire.server import FakeServer

from .conftest import Otel


@pytest.fixture
def instrumented(otel: Otel) -> Iterator[Otel]:
    """OpenTelemetry's own httpx (httpx2: the OpenAI and Anthropic SDKs' client) and
    sqlite3 instrumentations, on the test's provider."""
    provider = otel.telemetry.tracer_provider
    instrumentors = (HTTPXClientInstrumentor(), HTTPX2ClientInstrumentor(),
                     SQLite3Instrumentor())
    for i in instrumentors:
        i.instrument(tracer_provider=provider)
    yield otel
    for i in instrumentors:
        i.uninstrument()


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HANDOFFS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    from wire.openai_api import OpenAIWire

    server = FakeServer(OpenAIWire()).start()
    yield server
    server.stop()


def parent_name(otel: Otel, span: ReadableSpan) -> str | None:
    parent = otel.parent_of(span)
    return parent.name if parent is not None else None


def http_spans(otel: Otel) -> list[ReadableSpan]:
    return [s for s in otel.spans if s.name in ("POST", "GET")]


async def test_the_sdks_http_call_nests_under_chat(instrumented: Otel,
                                                   openai_server: FakeServer) -> None:
    openai_server.add(completion(calls=[tool_call("c1", "transfer_to_billing", {})]),
                      completion("Refunded."))
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    runner = Runner(team, model=openai_model(openai_server), telemetry=instrumented.telemetry)

    await runner.run("s1", "charged twice")

    posts = http_spans(instrumented)
    assert len(posts) == 2
    assert [parent_name(instrumented, p) for p in posts] == ["chat gpt-test"] * 2
    chats = instrumented.named("chat gpt-test")
    assert [instrumented.parent_of(p) for p in posts] == chats
    assert {p.context.trace_id for p in posts} == {  # type: ignore[union-attr]
        instrumented.one("invoke_workflow").context.trace_id}  # type: ignore[union-attr]
    # the semantic conventions' server attributes, from the adapter's base URL
    host, port = openai_server.url.removeprefix("http://").split(":")
    assert chats[0].attributes["server.address"] == host
    assert chats[0].attributes["server.port"] == int(port)
    # the agent's span says which provider and model, and the tokens it used in all
    triage = instrumented.one("invoke_agent triage")
    assert triage.attributes["gen_ai.provider.name"] == "openai"
    assert triage.attributes["gen_ai.request.model"] == "gpt-test"
    assert (triage.attributes["gen_ai.usage.input_tokens"],
            triage.attributes["gen_ai.usage.output_tokens"]) == (12, 5)


async def test_a_streamed_call_nests_under_chat_and_the_reader_sees_the_agent(
        instrumented: Otel, openai_server: FakeServer) -> None:
    """While the model streams, its span is current for the model's work only: the
    reader of the deltas is back in the agent's span between pieces."""
    openai_server.add(stream(["Hel", "lo"]))
    runner = Runner(Team([Agent("triage")]), model=openai_model(openai_server),
                    telemetry=instrumented.telemetry)
    seen = []
    async for e in runner.stream("s1", "hi"):
        if e.type == "text_delta":
            seen.append(trace.get_current_span().get_span_context().span_id)

    [post] = http_spans(instrumented)
    assert parent_name(instrumented, post) == "chat gpt-test"
    agent = instrumented.one("invoke_agent triage")
    # the reader runs in its own task: the turn's context never leaks into it
    assert seen and set(seen) == {0}
    assert agent.status.status_code is StatusCode.UNSET


@tool
def count_orders(customer: str) -> int:
    """Count a customer's orders (a sync tool: a query on the event loop's thread)."""
    with sqlite3.connect(DB) as db:
        return int(db.cursor().execute("SELECT count(*) FROM orders WHERE customer = ?",
                                       (customer,)).fetchone()[0])


@tool
async def last_order(customer: str) -> str:
    """The customer's last order (an async tool: the query in a worker thread)."""
    def query() -> str:
        with sqlite3.connect(DB) as db:
            return str(db.cursor().execute("SELECT max(id) FROM orders WHERE customer = ?",
                                           (customer,)).fetchone()[0])
    return await asyncio.to_thread(query)


@tool
async def fetch_invoice(url: str) -> str:
    """Fetch an invoice over HTTP."""
    async with httpx.AsyncClient() as client:
        return str((await client.get(url)).status_code)


DB = ""


@pytest.fixture
def orders_db(tmp_path: Path) -> Iterator[str]:
    global DB
    DB = str(tmp_path / "orders.db")
    with sqlite3.connect(DB) as db:
        db.execute("CREATE TABLE orders (id INTEGER, customer TEXT)")
        db.executemany("INSERT INTO orders VALUES (?, ?)", [(1, "ada"), (2, "ada")])
    yield DB


async def test_queries_and_http_calls_of_concurrent_tools_nest_under_their_own_span(
        instrumented: Otel, orders_db: str, openai_server: FakeServer) -> None:
    team = Team([Agent("billing", tools=[count_orders, last_order, fetch_invoice])])
    model = ScriptedModel([[call("count_orders", customer="ada"),
                            call("last_order", customer="ada"),
                            call("fetch_invoice", url=openai_server.url + "/invoices/7")],
                           reply("Two orders.")])
    runner = Runner(team, model=model, telemetry=instrumented.telemetry)

    result = await runner.run("s1", "how many orders?")

    assert result.output == "Two orders."
    queries = [s for s in instrumented.spans if s.name.startswith("SELECT")]
    assert sorted(parent_name(instrumented, q) or "" for q in queries) == [
        "execute_tool count_orders", "execute_tool last_order"]
    [post] = http_spans(instrumented)
    assert parent_name(instrumented, post) == "execute_tool fetch_invoice"
    tool_span = instrumented.one("execute_tool count_orders")
    assert tool_span.attributes["gen_ai.tool.description"] == (
        "Count a customer's orders (a sync tool: a query on the event loop's thread).")


async def test_concurrent_delegates_calls_nest_under_their_own_chat(
        instrumented: Otel, openai_server: FakeServer) -> None:
    """Two delegates answer at once (each in its own task); each one's HTTP call is under
    its own `chat`, which is under its own `invoke_agent`."""
    from .conftest import BarrierModel

    class Delegate(BarrierModel):
        async def complete(self, request: Any) -> Any:
            async with httpx.AsyncClient() as client:
                await client.post(openai_server.url + f"/v1/{request.agent}", json={})
            return await super().complete(request)

    openai_server.add(completion("a"), completion("b"))
    team = Team([Agent("triage", handoffs=[Handoff("research", returns=True),
                                          Handoff("facts", returns=True)]),
                 Agent("research"), Agent("facts")])
    model = Delegate({"triage": [[transfer("research", task="R."), transfer("facts", task="F.")],
                                 reply("Done.")],
                      "research": [reply("R")], "facts": [reply("F")]},
                     together=("research", "facts"))
    await Runner(team, model=model, telemetry=instrumented.telemetry).run("s1", "hi")

    for post in http_spans(instrumented):
        chat = instrumented.parent_of(post)
        assert chat is not None and chat.name == "chat scripted-1"
        agent = instrumented.parent_of(chat)
        assert agent is not None
        agent_name = agent.name.removeprefix("invoke_agent ")
        assert agent_name in ("triage", "research", "facts")
        assert chat.attributes["gen_ai.agent.name"] == agent_name


@pytest.mark.filterwarnings("ignore:.*LoggingHandler.*:DeprecationWarning")
async def test_log_records_written_during_a_turn_carry_its_trace(otel: Otel) -> None:
    """OpenTelemetry's logging bridge reads the current span: a record a tool writes has
    the tool's span, a record the runtime writes has the agent's."""
    exporter = InMemoryLogRecordExporter()
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    handler = LoggingHandler(logger_provider=logs)
    logger = logging.getLogger("handoffs")
    app = logging.getLogger("app.tools")
    old = logger.level
    logger.setLevel(logging.INFO)
    app.setLevel(logging.INFO)
    logger.addHandler(handler)
    app.addHandler(handler)

    @tool
    def refund(order: str) -> str:
        """Refund an order."""
        app.info("refunding %s", order)
        return "ok"

    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing", tools=[refund])])
    model = ScriptedModel({"triage": [transfer("billing")],
                           "billing": [call("refund", order="A1"), reply("Refunded.")]})
    try:
        await Runner(team, model=model, telemetry=otel.telemetry).run("s1", "refund A1")
    finally:
        logger.removeHandler(handler)
        app.removeHandler(handler)
        logger.setLevel(old)

    by_id = {s.context.span_id: s.name for s in otel.spans}  # type: ignore[union-attr]
    records = {r.log_record.body: r.log_record for r in exporter.get_finished_logs()}
    trace_id = otel.one("invoke_workflow").context.trace_id  # type: ignore[union-attr]
    assert {r.trace_id for r in records.values()} == {trace_id}
    assert by_id[records["refunding A1"].span_id] == "execute_tool refund"
    accepted = next(b for b in records if str(b).startswith("handoff triage -> billing"))
    assert by_id[records[accepted].span_id] == "invoke_agent triage"
    ended = next(b for b in records if str(b).startswith("turn 1 of s1 ended"))
    assert by_id[records[ended].span_id] == "invoke_agent billing"  # who ended it


async def test_the_callers_span_is_current_again_after_the_turn(otel: Otel) -> None:
    """The turn nests under the application's current span, and leaves it current."""
    tracer = otel.telemetry.tracer_provider.get_tracer("app")
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    runner = Runner(team, model=ScriptedModel([transfer("billing"), reply("Done.")]),
                    telemetry=otel.telemetry)
    with tracer.start_as_current_span("request") as request:
        await runner.run("s1", "hi")
        assert trace.get_current_span() is request
    assert trace.get_current_span() is trace.INVALID_SPAN
    assert otel.parent_of(otel.one("invoke_workflow")) == otel.one("request")


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return _deeper(order_id)


def _deeper(order_id: str) -> str:
    raise ValueError(f"no order {order_id}")


async def test_a_tool_that_raises_leaves_its_exception_and_stack_on_its_span(
        otel: Otel) -> None:
    team = Team([Agent("triage", tools=[lookup])])
    model = ScriptedModel([call("lookup", order_id="A1"), reply("Sorry.")])
    await Runner(team, model=model, telemetry=otel.telemetry).run("s1", "where is A1?")

    span = otel.one("execute_tool lookup")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "tool_error"
    [event] = span.events
    assert event.name == "exception"
    assert event.attributes["exception.type"] == "ValueError"
    assert event.attributes["exception.message"] == "no order A1"
    stack = str(event.attributes["exception.stacktrace"])
    assert "in _deeper" in stack and 'raise ValueError(f"no order {order_id}")' in stack


async def test_a_tool_that_fails_the_turn_leaves_its_span_in_error(otel: Otel) -> None:
    """`on_error="raise"`: the call never gets a result; its span still ends, in error,
    with the exception."""
    @tool(on_error="raise")
    def charge(amount: int) -> str:
        """Charge."""
        raise RuntimeError("card declined")

    team = Team([Agent("triage", tools=[charge])])
    model = ScriptedModel([call("charge", amount=5)])
    result = await Runner(team, model=model, telemetry=otel.telemetry).run("s1", "pay")

    assert result.error is not None
    span = otel.one("execute_tool charge")
    assert span.status.status_code is StatusCode.ERROR
    assert [e.attributes["exception.message"] for e in span.events] == ["card declined"]
