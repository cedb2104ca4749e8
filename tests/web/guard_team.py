"""The team the guardrail page and OpenAI-endpoint tests serve: one desk whose input
guardrail asks a classifier agent (`ctx.ask`) whether a message is about flights, and
refuses the rest with a reply. Offline: the model answers the classifier's structured
call from the text, and anything else with a fixed answer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from pydantic import BaseModel

from handoffs import Agent, GuardrailResult, RunContext, Runner, Team
from handoffs.core.guardrails import guardrail
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta, Usage

REPLY = "I can only help with questions about your flights."
ANSWER = "Your flight leaves from gate 12."


class Verdict(BaseModel):
    relevant: bool
    reasoning: str


classifier = Agent("relevance_checker", output_type=Verdict,
                   instructions="Say whether the message is about air travel.")


@guardrail(name="relevance")
async def relevance(ctx: RunContext, text: str) -> GuardrailResult:
    v = await ctx.ask(classifier, text)
    if v.relevant:
        return GuardrailResult.ok(reasoning=v.reasoning)
    return GuardrailResult.trip("Not about air travel.", reply=REPLY, reasoning=v.reasoning)


class DeskModel:
    """Answers a structured call as the classifier, anything else as the desk."""

    def _answer(self, request: ModelRequest) -> ModelResponse:
        if request.output is not None:
            text = request.messages[-1].text
            poem = "poem" in text.lower()
            return ModelResponse(json.dumps({
                "relevant": not poem,
                "reasoning": "asks for a poem" if poem else "asks about a flight"}),
                usage=Usage(5, 5, 1), model="desk")
        return ModelResponse(ANSWER, usage=Usage(5, 5, 1), model="desk")

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return self._answer(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = self._answer(request)
        yield TextDelta(response.text)
        yield response


def make_runner() -> Runner:
    desk = Agent("desk", display_name="Flight desk", input_guardrails=[relevance],
                 description="Answers questions about flights.")
    return Runner(Team([desk]), model=DeskModel())
