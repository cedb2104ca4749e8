"""`handoffs stats`: which routes fail and why, read from a real database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from handoffs import Agent, Runner, Team
from handoffs.models import ModelRequest, ModelResponse, Usage
from handoffs.testing import ScriptedModel, reply, transfer

from .conftest import Handoffs


async def test_stats_show_each_route_with_its_refusals(handoffs: Handoffs,
                                                       tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'stats.db'}"
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel([transfer("nobody"), transfer("billing", reason="money"),
                           reply("Billing here."), transfer("billing"), reply("Again.")])
    runner = Runner(team, model=model, store=url)
    await runner.run("s1", "my bill")
    await runner.select_agent("s1", "triage")
    await runner.run("s1", "and again")
    await runner.store.close()

    table = handoffs("stats", "--store", url)
    as_json = handoffs("stats", "--store", url, "--json", "--since", "1h")

    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[:3] == ["route", "kind", "requests"]
    row = next(x for x in table.stdout.splitlines() if x.startswith("triage -> nobody"))
    assert "unknown_target" in row
    routes = {(r["source"], r["target"], r["kind"]): r
              for r in json.loads(as_json.stdout)["routes"]}
    assert routes[("triage", "billing", "llm")]["accepted"] == 2
    assert routes[("triage", "nobody", "llm")]["refused"] == {"unknown_target": 1}
    assert routes[("billing", "triage", "user_request")]["accepted"] == 1


def test_a_bad_window_is_a_clear_error(handoffs: Handoffs) -> None:
    done = handoffs("stats", "--store", "memory://", "--since", "yesterday")
    assert done.returncode == 2 and "--since takes a duration" in done.stderr


class Priced(ScriptedModel):
    """Every response read 10,000 tokens (8,000 from the cache, 1,000 written to it) and
    wrote 500, as the provider's `claude-test-2026`."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await super().complete(request)
        response.usage = Usage(10_000, 500, 1, cache_read_tokens=8_000,
                               cache_write_tokens=1_000)
        response.model = "claude-test-2026"
        return response


async def test_prices_give_the_cost_of_each_conversation(handoffs: Handoffs,
                                                          tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cost.db'}"
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = Priced({"triage": [transfer("billing"), reply("Hi.")],
                    "billing": [reply("Billing here."), reply("Done.")]})
    runner = Runner(team, model=model, store=url)
    await runner.run("a", "my bill")   # triage, then billing: two calls
    await runner.run("a", "thanks")    # billing: one call
    await Runner(team, model=model, store=url).run("b", "hello")  # triage: one call
    await Runner(team, model=ScriptedModel([reply("x")]), store=url).run("c", "no tokens")
    await runner.store.close()
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"claude-test": {
        "input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}}))

    plain = handoffs("stats", "--store", url)
    table = handoffs("stats", "--store", url, "--prices", str(prices))
    as_json = handoffs("stats", "--store", url, "--prices", str(prices), "--json")

    assert plain.returncode == table.returncode == as_json.returncode == 0, table.stderr
    assert "cost" not in plain.stdout  # no price table, no cost
    # A call: 1,000 uncached x $3 + 8,000 cached x $0.30 + 1,000 written x $3.75 + 500
    # out x $15, per million: $0.01665. Session a made three calls, b one.
    cost = json.loads(as_json.stdout)["cost"]
    assert cost["by_session"] == {"a": pytest.approx(0.04995), "b": pytest.approx(0.01665)}
    assert cost["conversations"] == 2 and cost["unreported"] == 1
    assert cost["total"] == pytest.approx(0.0666)
    assert ("cost per conversation (2 conversations): mean $0.0333, median $0.0333, "
            "max $0.0500; total $0.0666") in table.stdout
    assert "1 conversations counted no tokens" in table.stdout


def test_a_bad_price_table_is_a_clear_error(handoffs: Handoffs, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"gpt-4.1": {"input": "cheap", "output": 1}}')
    done = handoffs("stats", "--store", "memory://", "--prices", str(prices))
    assert done.returncode != 0 and "gpt-4.1.input must be a price" in done.stderr


async def test_stats_count_each_guardrails_checks_trips_and_replies(
        handoffs: Handoffs, tmp_path: Path) -> None:
    from handoffs import GuardrailResult, RunContext, guardrail

    @guardrail(name="no_poems")
    def no_poems(ctx: RunContext, text: str) -> GuardrailResult:
        if "poem" in text:
            return GuardrailResult.trip("A poem.", reply="Flights only.")
        return GuardrailResult.ok()

    url = f"sqlite:///{tmp_path / 'guard.db'}"
    runner = Runner(Team([Agent("triage", input_guardrails=[no_poems])]), store=url,
                    model=ScriptedModel([reply("dropped"), reply("Gate 12."), reply("Hi.")]))
    for text in ("a poem", "which gate?", "hello"):
        await runner.run("s1", text)
    await runner.store.close()

    table = handoffs("stats", "--store", url, "--guardrails")
    as_json = handoffs("stats", "--store", url, "--guardrails", "--json")

    assert table.returncode == 0, table.stderr
    assert ["no_poems", "input", "3", "1", "1"] in [x.split() for x in table.stdout.splitlines()]
    assert json.loads(as_json.stdout)["guardrails"] == [
        {"guardrail": "no_poems", "stage": "input", "checks": 3, "trips": 1, "replies": 1}]
