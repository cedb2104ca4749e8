"""`Agent(routing="calibrated")`: the routing choice read from the model's token
probabilities and divided by what the model chooses with no message at all, so a model's
leaning towards one option (a small model's first route listed) stops deciding."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Sequence

import pydantic

from handoffs import Agent, Handoff, Runner, RunStatus, Team
from handoffs.core.messages import UserMessage
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta, TokenLogprobs, Usage
from handoffs.models.routing import CONTENT_FREE, route_probabilities

LEANING = {"triage": 0.03, "billing": 0.95, "technical": 0.02}
"""What the model says to a content-free message: billing, nearly always."""


def _tokens(route: str, probs: dict[str, float], reason: str = "because"
            ) -> tuple[TokenLogprobs, ...]:
    """An answer's tokens as llama.cpp's server reports them: the route value split from
    its quote, the alternatives at that position the options' first pieces."""
    top = tuple(sorted(((name[:4], math.log(p)) for name, p in probs.items() if p > 0),
                       key=lambda a: -a[1]))
    rest = f'{route[4:]}", "reason": "{reason}"}}'
    return (TokenLogprobs('{"', -0.01), TokenLogprobs("route", -0.01),
            TokenLogprobs('": "', -0.01),
            TokenLogprobs(route[:4], math.log(probs[route]), top),
            TokenLogprobs(rest, -0.1))


class Probed:
    """A model that answers a routing choice with token probabilities: `LEANING` for the
    content-free messages, `choices[i]` for the i-th real one; plain text otherwise."""

    def __init__(self, choices: Sequence[tuple[str, dict[str, float]]],
                 answers: Sequence[str] = ("Here to help.",), with_logprobs: bool = True
                 ) -> None:
        self.choices = list(choices)
        self.answers = list(answers)
        self.with_logprobs = with_logprobs
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        usage = Usage(10, 5, 1)
        if request.output is None:
            return ModelResponse(self.answers.pop(0), usage=usage)
        enum = request.output.schema["properties"]["route"]["enum"]
        last = request.messages[-1]
        if isinstance(last, UserMessage) and last.text in CONTENT_FREE:
            route, probs = "billing", LEANING
        elif len(enum) == 1:  # a route's details, asked alone
            return ModelResponse(json.dumps({"route": enum[0], "reason": "asked again",
                                             enum[0]: {"order_id": "A-1"}}), usage=usage)
        else:
            route, probs = self.choices.pop(0)
        text = json.dumps({"route": route, "reason": "because"})
        logprobs = (_tokens(route, probs) if self.with_logprobs and request.logprobs else ())
        return ModelResponse(text, usage=usage, logprobs=logprobs)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.complete(request)


def _team(routing: str = "calibrated") -> Team:
    triage = Agent("triage", routing=routing,  # type: ignore[arg-type]
                   handoffs=["billing", "technical"], description="Greets customers.")
    return Team([triage, Agent("billing", description="Charges and invoices."),
                 Agent("technical", description="Crashes and setup.")])


async def test_calibration_overturns_the_models_leaning_towards_one_route() -> None:
    # The model names billing (0.70) but leans to billing with no message at all (0.95):
    # technical is 12 times likelier than its prior, billing less likely than its own.
    model = Probed([("billing", {"triage": 0.05, "billing": 0.70, "technical": 0.25})],
                   ["Technical here."])
    result = await Runner(_team(), model=model).run("s", "the app crashes")

    assert result.status is RunStatus.COMPLETED
    assert (result.agent, result.output) == ("technical", "Technical here.")
    record = result.handoffs[0]
    assert (record.target, record.accepted) == ("technical", True)
    assert record.explanation == ""  # the model's reason was for billing: not kept
    choice, *priors, answer = model.requests
    assert choice.logprobs == 20 and choice.output is not None
    assert [r.messages[-1].text for r in priors] == list(CONTENT_FREE)  # type: ignore[union-attr]
    assert all(len(r.messages) == 1 and r.system == choice.system for r in priors)
    assert answer.agent == "technical"
    assert result.usage.requests == 5  # the choice, three priors, the answer


async def test_a_choice_the_calibration_confirms_keeps_its_reason() -> None:
    model = Probed([("billing", {"triage": 0.01, "billing": 0.98, "technical": 0.01})],
                   ["Billing here."])
    result = await Runner(_team(), model=model).run("s", "I was charged twice")

    assert result.agent == "billing"
    assert result.handoffs[0].explanation == "because"


async def test_the_prior_is_asked_once_per_set_of_options() -> None:
    model = Probed([("billing", {"triage": 0.05, "billing": 0.70, "technical": 0.25}),
                    ("billing", {"triage": 0.6, "billing": 0.39, "technical": 0.01})],
                   ["Technical here.", "Hello!"])
    runner = Runner(_team(), model=model)

    first = await runner.run("a", "the app crashes")
    second = await runner.run("b", "hello there")

    assert (first.agent, second.agent) == ("technical", "triage")  # 0.6/0.03 wins
    assert len(model.requests) == 1 + 3 + 1 + 1 + 1  # priors asked with the first only
    assert second.usage.requests == 2


async def test_without_token_probabilities_the_plain_choice_stands() -> None:
    model = Probed([("billing", {"triage": 0.05, "billing": 0.70, "technical": 0.25})],
                   ["Billing here."], with_logprobs=False)
    result = await Runner(_team(), model=model).run("s", "the app crashes")

    assert result.agent == "billing"
    assert len(model.requests) == 2  # no prior was asked: nothing to divide
    assert result.handoffs[0].explanation == "because"


async def test_the_plain_choice_asks_for_no_token_probabilities() -> None:
    model = Probed([("billing", {"triage": 0.05, "billing": 0.70, "technical": 0.25})],
                   ["Billing here."])
    result = await Runner(_team("choice"), model=model).run("s", "the app crashes")

    assert result.agent == "billing"
    assert model.requests[0].logprobs is None and len(model.requests) == 2


class Order(pydantic.BaseModel):
    order_id: str


async def test_an_overturned_route_with_a_payload_gets_its_details_asked_alone() -> None:
    triage = Agent("triage", routing="calibrated", handoffs=[
        "billing", Handoff("technical", payload=Order)])
    team = Team([triage, Agent("billing"), Agent("technical")])
    model = Probed([("billing", {"triage": 0.05, "billing": 0.70, "technical": 0.25})],
                   ["Technical here."])
    result = await Runner(team, model=model).run("s", "order A-1 crashes the app")

    assert result.agent == "technical"
    record = result.handoffs[0]
    assert record.payload == {"order_id": "A-1"} and record.explanation == "asked again"
    alone = model.requests[4]
    assert alone.output is not None
    assert alone.output.schema["properties"]["route"]["enum"] == ["technical"]


def test_route_probabilities_read_the_token_where_the_route_begins() -> None:
    # The value's first token carries its opening quote, as some tokenizers make it.
    tokens = (TokenLogprobs('{"route":', -0.01),
              TokenLogprobs(' "bill', math.log(0.5), (
                  (' "bill', math.log(0.5)), (' "tech', math.log(0.3)),
                  (' "tri', math.log(0.1)), (' "', math.log(0.05)))),
              TokenLogprobs('ing"}', -0.01))
    probs = route_probabilities(tokens, ["triage", "billing", "technical"])
    assert probs is not None
    assert [round(probs[n], 3) for n in ("triage", "billing", "technical")] == [
        0.111, 0.556, 0.333]
    # a piece two options begin with counts for neither; no route value: no figures
    assert route_probabilities((TokenLogprobs('{"route": "t', 0.0, (('{"route": "t', 0.0),)),),
                               ["triage", "technical"]) is None
    assert route_probabilities((TokenLogprobs("hello", 0.0),), ["triage"]) is None
    assert route_probabilities((), ["triage"]) is None
