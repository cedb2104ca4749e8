"""Routing by one constrained choice (`Agent(routing="choice")`).

Calling a `transfer_to_<agent>` tool asks a lot of a small model at once: decide whether
to call a tool at all, pick one among handoff tools and ordinary ones, and write its
arguments, in one free-form generation. A single constrained choice is the form in
which many models classify best (not every one: measure with `handoffs eval --routing`).
`RoutingChoice` wraps an agent's model: when the agent receives
a user message (the request's last message is the user's), it first asks the model who
should handle it, as a JSON object whose `route` can only be the agent itself or one of
its one-way routes offered in the request (the provider's structured output enforces it:
OpenAI's strict JSON schema, llama.cpp's `json_schema`, Anthropic's forced tool), with a
short `reason` and, for a route with a payload, its payload. Then:

- a route: the response is that route's transfer call (`reason` from the choice), so the
  runtime makes the handoff as for any transfer the model calls (`llm` reason, through
  the policy, payload validated);
- the agent itself, and every later step: the inner model answers the request with the
  one-way transfer tools (and the system text's lines on making them) left out, so it
  cannot second-guess the choice. Delegation tools (`ask_<agent>`) stay.

An agent that was handed the conversation in this turn (a handoff note follows the
user's message) makes no choice of its own: the message was routed already, and a second
choice is where a small model bounces it back. It keeps its transfer tools, so a chain
(triage → billing → refunds) still goes on, under the policy's loop rules. Runtime
feedback after the user's message (a nudge, a refusal) is no new message: no new choice.

**Calibrated** (`Agent(routing="calibrated")`): a small model's choice leans on the
options themselves (Qwen2.5-Coder-0.5B named the first route listed in 92 of 94 first
messages, whatever they said). The choice is then asked with the likeliest tokens at each
position (`ModelRequest.logprobs`), the probability of each option is read at the token
where the `route` value begins, and each is divided by the probability the model gives it
with no message at all (three content-free messages, "N/A", "[MASK]" and an empty one, asked
once per set of options and kept: contextual calibration, Zhao et al. 2021); the option
with the highest ratio is the route. A provider that reports no token probabilities
(Anthropic) gets the plain choice. When calibration overturns the model's own pick and
the route takes a payload, its details are asked once more with that route alone allowed.

An answer that is not a valid choice (a provider without structured output, a model that
ignores it) falls back to the request as it came, transfer tools included. A request
that forces a transfer (`tool_choice` names one, as the narrated-handoff nudge does)
passes through unchanged. Both model calls are one effect for the runtime (one executor
call, one Temporal activity), and their usage is summed on the response.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import math
import re
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.messages import Message, Note, ToolCall, UserMessage
from ..core.output import OutputSpec, unfenced
from .base import Model, ModelRequest, ModelResponse, TextDelta, TokenLogprobs, Usage
from .strict import strict_compatible

if TYPE_CHECKING:
    from ..core.team import AgentPlan, Route

CHOICE_NAME = "route_choice"
"""The structured-output name the choice is asked under."""

MAX_REASON = 200
"""The longest choice `reason` kept (it becomes the handoff's explanation and note)."""

HANDOFF_NOTE = "# Handoff"
"""How the note that hands an agent the conversation begins (`core.handoff.handoff_note`)."""

CONTENT_FREE = ("N/A", "[MASK]", "")
"""The messages a calibrated choice asks about to learn what the model says to nothing."""

TOP_TOKENS = 20
"""How many likeliest tokens a calibrated choice asks for at each position."""

FLOOR = 1e-3
"""The least prior probability an option is divided by (one the model never names with no
message would otherwise win on any trace of probability)."""

ROUTE_VALUE = re.compile(r'"route"\s*:\s*"')

logger = logging.getLogger("handoffs.models.routing")



class RoutingChoice:
    """A `Model` that routes an agent's user messages by one constrained choice, then
    lets the model it wraps answer (see the module's text)."""

    def __init__(self, inner: Model, plan: AgentPlan, calibrated: bool = False) -> None:
        self.inner = inner
        """The agent's own model: it makes the choice and answers."""
        self.calibrated = calibrated
        """Read the route from the choice's token probabilities, divided by the model's
        own leaning with no message (`priors`)."""
        self.priors: dict[tuple[str, ...], dict[str, float]] = {}
        """Per set of options (the agent first, then its routes as offered): the
        probability the model gives each with a content-free message, once asked."""
        self.agent = plan.agent.name
        self.description = plan.agent.description
        self.routes: dict[str, Route] = {
            name: r for name, r in plan.routes.items() if not r.handoff.returns}
        """The agent's one-way routes by tool name (the choice's options)."""
        self.handoff_text = plan.handoff_text

    def __getattr__(self, name: str) -> Any:  # provider, model, retry, base_url, ...
        return getattr(self.inner, name)

    # -- Model -------------------------------------------------------------------------

    async def complete(self, request: ModelRequest) -> ModelResponse:
        options = self._options(request)
        if not options:
            return await self.inner.complete(self._plain(request))
        routed, usage = await self._choose(request, options)
        if routed is None:  # not a valid choice: the request as it came
            return _with(await self.inner.complete(request), usage)
        if isinstance(routed, ModelResponse):
            return routed
        return _with(await self.inner.complete(self._plain(request)), usage)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        options = self._options(request)
        usage = None
        if options:
            routed, usage = await self._choose(request, options)
            if isinstance(routed, ModelResponse):
                yield routed
                return
            if routed is None:
                async for piece in self.inner.stream(request):
                    yield _with(piece, usage) if isinstance(piece, ModelResponse) else piece
                return
        async for piece in self.inner.stream(self._plain(request)):
            yield _with(piece, usage) if isinstance(piece, ModelResponse) else piece

    # -- the choice --------------------------------------------------------------------

    def _options(self, request: ModelRequest) -> list[Route]:
        """The routes to choose among for this request; empty when no choice is made
        (not a fresh user message, a forced call, no route offered)."""
        if not self.routes or not request.messages:
            return []
        if not isinstance(request.messages[-1], UserMessage):
            return []
        if request.tool_choice in self.routes:
            return []
        return [self.routes[s.name] for s in request.tools if s.name in self.routes]

    def choice_request(self, request: ModelRequest, options: list[Route],
                       alone: bool = False) -> ModelRequest:
        """The constrained request: the agent's system text and view, no tools, and the
        answer's schema (`route` one of the agent and `options`' targets; `alone`: only
        the one route of `options`, to ask its details once it is chosen)."""
        lines = [f'- "{self.agent}": you handle it yourself'
                 + (f" ({self.description})" if self.description else "") + "."]
        lines += [f'- "{r.target.name}": {r.spec.description}' for r in options]
        system = _without(request.system, self.handoff_text)
        system = (f"{system}\n\n" if system else "") + (
            "Decide who should handle the user's latest message: you, or an agent you can "
            "hand the conversation to. The options:\n" + "\n".join(lines) + "\n"
            'Answer only with a JSON object: "route" (one of the names above) and '
            '"reason" (why, in a few words)'
            + (", and the details the chosen agent needs where the schema asks for them"
               if any(_payload(r) for r in options) else "") + ".")
        schema = _schema(self.agent, options)
        if alone:
            schema["properties"]["route"]["enum"] = [r.target.name for r in options]
        spec = OutputSpec(CHOICE_NAME, schema, strict_compatible(schema), None)
        return dataclasses.replace(request, system=system, tools=(), tool_choice=None,
                                   output=spec, parallel_tool_calls=None)

    async def _choose(self, request: ModelRequest, options: list[Route]
                      ) -> tuple[ModelResponse | bool | None, Usage | None]:
        """(a transfer response, True for the agent itself, or None for no valid choice),
        and the choice's usage."""
        asked = self.choice_request(request, options)
        if self.calibrated:
            asked = dataclasses.replace(asked, logprobs=TOP_TOKENS)
        answer = await self.inner.complete(asked)
        usage: Usage | None = answer.usage or Usage(requests=1)
        picked = _parse(answer.text)
        route = picked.get("route") if picked is not None else None
        if self.calibrated:
            names = [self.agent, *(r.target.name for r in options)]
            calibrated, spent = await self._calibrated(asked, names, answer.logprobs)
            usage = _sum(usage, spent)
            if calibrated is not None and calibrated != route:
                picked = {"route": calibrated}  # the model's reason was for another route
                route = calibrated
        if picked is None:
            return None, usage
        if route == self.agent:
            return True, usage
        chosen = next((r for r in options if r.target.name == route), None)
        if chosen is None:
            return None, usage
        if _payload(chosen) and not isinstance(picked.get(chosen.target.name), Mapping):
            answer = await self.inner.complete(self.choice_request(request, [chosen], alone=True))
            usage = _sum(usage, answer.usage or Usage(requests=1))
            picked = _parse(answer.text) or picked
        reason = " ".join(str(picked.get("reason") or "").split())
        if len(reason) > MAX_REASON:  # a small model may ramble; the note repeats it
            reason = reason[:MAX_REASON - 1].rstrip() + "…"
        args: dict[str, Any] = {"reason": reason}
        details = picked.get(chosen.target.name)
        if isinstance(details, Mapping):
            args.update(details)
        call = ToolCall(f"call_route_{secrets.token_hex(6)}", chosen.tool_name,
                        json.dumps(args, ensure_ascii=False))
        return ModelResponse(tool_calls=(call,), usage=usage, model=answer.model,
                             stop="tool_calls"), usage

    async def _calibrated(self, asked: ModelRequest, names: list[str],
                          tokens: Sequence[TokenLogprobs]) -> tuple[str | None, Usage | None]:
        """The option with the highest probability over its prior, or None (no token
        probabilities, or no prior to divide by); and the usage of asking for the prior."""
        probs = route_probabilities(tokens, names)
        if probs is None:
            return None, None
        key = tuple(names)
        prior = self.priors.get(key)
        spent = None
        if prior is None:
            prior, spent = await self._prior(asked, names)
            if prior is None:
                return None, spent
            self.priors[key] = prior
        return max(names, key=lambda n: probs[n] / max(prior[n], FLOOR)), spent

    async def _prior(self, asked: ModelRequest, names: list[str]
                     ) -> tuple[dict[str, float] | None, Usage | None]:
        """What the model chooses with no message at all: each option's probability,
        averaged over the content-free messages it could be read from."""
        seen: list[dict[str, float]] = []
        spent = Usage()
        for text in CONTENT_FREE:
            try:
                answer = await self.inner.complete(dataclasses.replace(
                    asked, messages=(UserMessage(text, self.agent),)))
            except Exception:  # the message is routed all the same, uncalibrated
                logger.warning("%s: the routing choice's prior could not be asked; this "
                               "message is routed by the plain choice", self.agent,
                               exc_info=True)
                return None, spent
            spent.add(answer.usage or Usage(requests=1))
            probs = route_probabilities(answer.logprobs, names)
            if probs is not None:
                seen.append(probs)
        if not seen:
            return None, spent
        return {n: sum(p[n] for p in seen) / len(seen) for n in names}, spent

    def _plain(self, request: ModelRequest) -> ModelRequest:
        """The request without the one-way transfer tools and the lines on making them;
        as it came for an agent handed the conversation in this turn."""
        if request.tool_choice in self.routes or not any(
                s.name in self.routes for s in request.tools) or handed(request.messages):
            return request
        tools = tuple(s for s in request.tools if s.name not in self.routes)
        choice = request.tool_choice
        if not tools and choice is not None:
            choice = None
        parallel = request.parallel_tool_calls
        if parallel is False and tools:  # it was off for the transfers' sake only
            parallel = None
        return dataclasses.replace(request, system=_without(request.system, self.handoff_text),
                                   tools=tools, tool_choice=choice,
                                   parallel_tool_calls=parallel)


def handed(messages: Sequence[Message]) -> bool:
    """Whether a handoff gave the conversation to the requesting agent since the user's
    last message (its note follows that message)."""
    for m in reversed(messages):
        if isinstance(m, UserMessage):
            return False
        if isinstance(m, Note) and m.to_model and m.text.startswith(HANDOFF_NOTE):
            return True
    return False


def _payload(route: Route) -> dict[str, Any]:
    """The properties of a route's tool other than `reason` (its payload's)."""
    props = route.spec.parameters.get("properties", {})
    return {k: v for k, v in props.items() if k != "reason"}


def _schema(agent: str, options: list[Route]) -> dict[str, Any]:
    props: dict[str, Any] = {
        "route": {"type": "string", "enum": [agent, *(r.target.name for r in options)]},
        "reason": {"type": "string"},
    }
    required = ["route", "reason"]
    defs: dict[str, Any] = {}
    for r in options:
        fields = _payload(r)
        if not fields:
            continue
        params = r.spec.parameters
        defs.update(copy.deepcopy(params.get("$defs", {})))
        props[r.target.name] = {
            "anyOf": [{"type": "object", "properties": copy.deepcopy(fields),
                       "required": [k for k in params.get("required", ()) if k != "reason"],
                       "additionalProperties": False},
                      {"type": "null"}],
            "description": f"Only when route is {r.target.name!r}: what it needs."}
        required.append(r.target.name)
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required,
                              "additionalProperties": False}
    if defs:
        schema["$defs"] = defs
    return schema


def _parse(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(unfenced(text))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _without(system: str, text: str) -> str:
    if not text or text not in system:
        return system
    return re.sub(r"\n{3,}", "\n\n", system.replace(text, "")).strip()


def _with(response: ModelResponse, usage: Usage | None) -> ModelResponse:
    """`response` with `usage` (the choice's) added to its own."""
    if usage is None:
        return response
    return dataclasses.replace(response, usage=_sum(usage, response.usage))


def route_probabilities(tokens: Sequence[TokenLogprobs], names: Sequence[str]
                        ) -> dict[str, float] | None:
    """Each option's probability where the answer's `route` value begins (from that
    position's likeliest tokens: a token counts for the one option it begins, or that
    begins it), normalised over the options; None when the answer has no token
    probabilities, no `route` value, or none of the options among its tokens there."""
    if not tokens:
        return None
    starts = []
    text = ""
    for t in tokens:
        starts.append(len(text))
        text += t.token
    found = ROUTE_VALUE.search(text)
    if found is None:
        return None
    at = found.end()
    i = next((k for k in range(len(tokens)) if starts[k] + len(tokens[k].token) > at), None)
    if i is None:
        return None
    lead = at - starts[i]  # the part of the token before the value (its opening quote)
    probs = dict.fromkeys(names, 0.0)
    for token, logprob in tokens[i].top or ((tokens[i].token, tokens[i].logprob),):
        piece = token[lead:].strip().strip('"') if len(token) > lead else ""
        if not piece:
            continue
        hits = [n for n in names if n.startswith(piece) or piece.startswith(n)]
        if len(hits) == 1:
            probs[hits[0]] += math.exp(logprob)
    total = sum(probs.values())
    if total <= 0:
        return None
    return {n: p / total for n, p in probs.items()}


def _sum(usage: Usage | None, more: Usage | None) -> Usage | None:
    if more is None:
        return usage
    total = Usage()
    if usage is not None:
        total.add(usage)
    total.add(more)
    return total
