#!/usr/bin/env python3
"""Classifier calls per user message, for docs/guides/guardrails.md: two input guardrails
on both triage and faq, and a message that triage hands to faq. Each guardrail stands for
one classifier call.

    PYTHONPATH=src python bench/guardrail_calls.py

Before issue 41 it printed 4 (every agent the message reached checked it again); now 2.
"""

from __future__ import annotations

import asyncio

from handoffs import Agent, GuardrailResult, RunContext, Runner, Team
from handoffs.testing import ScriptedModel, reply, transfer

calls: list[tuple[str, str]] = []


def relevance(ctx: RunContext, text: str) -> GuardrailResult:
    calls.append(("relevance", ctx.agent))
    return GuardrailResult.ok()


def jailbreak(ctx: RunContext, text: str) -> GuardrailResult:
    calls.append(("jailbreak", ctx.agent))
    return GuardrailResult.ok()


async def main() -> None:
    triage = Agent("triage", handoffs=["faq"], input_guardrails=[relevance, jailbreak])
    faq = Agent("faq", input_guardrails=[relevance, jailbreak])
    model = ScriptedModel({"triage": [transfer("faq")], "faq": [reply("23 kg.")]})
    r = await Runner(Team([triage, faq]), model=model).run("s", "how heavy may my bag be?")
    print(f"{r.status.value} by {r.agent}: classifier calls per message: {len(calls)} {calls}")


if __name__ == "__main__":
    asyncio.run(main())
