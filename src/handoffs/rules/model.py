"""`RuleModel`: rules per agent, and what it does when no rule applies."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..core.handoff_tool import REASON_DESCRIPTION
from ..core.messages import ToolCall
from ..core.team import Team
from ..core.tools import ToolSpec
from ..errors import HandoffsError
from ..models.base import ModelRequest, ModelResponse, TextDelta, Usage, chunked
from ..models.routing import CHOICE_NAME
from .fallback import Fallback
from .objects import placeholder_object
from .request import Seen, asks_task, payload_schema
from .rule import SKIP, Rule, Template, fill

DEFAULT_ANSWER = "(Offline placeholder) A real model would {task} here{could}."
"""The answer when nothing else applies (no rule, no `default`, nothing to report): a
placeholder that says what a real model would do. `{task}` is what it would do with the
message (`answer “...”`, or do a delegated task), `{could}` the agent's other options
(`, or hand the conversation to Billing (Charges and invoices), or call lookup_order...`),
so a team of yours played offline shows where each agent could take the conversation."""


class RuleModel:
    """A deterministic offline `Model`: rules per agent, keyword routing, templates.

    `rules` is one list for every agent or a mapping of agent name to its rules.
    `default` is the answer when nothing applies (a template; see `handoffs.rules`).
    `team` is the team the model plays, when known: with it, an agent with no rule for a
    message hands it on along a path through other agents (back through triage, say),
    shows display names and knows who is a person; without it, the model sees only what
    each request offers (see `handoffs.rules.fallback`).
    `route=False` turns off the handoffs it makes when no rule applies, `tools=False` the
    tool calls.
    """

    def __init__(self, rules: Sequence[Rule] | Mapping[str, Sequence[Rule]] = (), *,
                 default: Template = None, team: Team | None = None, route: bool = True,
                 tools: bool = True, stream_chunks: int | None = None) -> None:
        if isinstance(rules, Mapping):
            self.rules: dict[str, tuple[Rule, ...]] | tuple[Rule, ...] = {
                agent: tuple(rs) for agent, rs in rules.items()}
        else:
            self.rules = tuple(rules)
        for rule in self._all_rules():
            if not isinstance(rule, Rule):
                raise HandoffsError(f"Not a Rule: {rule!r}.", code="invalid_rule")
        self.default = default
        self.fallback = Fallback(team, route, tools)
        """What an agent does when none of its rules applies."""
        self.stream_chunks = stream_chunks
        """When streaming, yield the text in pieces of this many characters (0: all at
        once); None: a word at a time."""
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""
        self._ids = itertools.count(1)

    def _all_rules(self) -> list[Rule]:
        if isinstance(self.rules, dict):
            return [r for rs in self.rules.values() for r in rs]
        return list(self.rules)

    def rules_for(self, agent: str) -> tuple[Rule, ...]:
        """The rules `agent` follows, in order (every agent's, for one list of rules)."""
        if isinstance(self.rules, dict):
            return self.rules.get(agent, ())
        return self.rules

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The response to `request` (see `respond`)."""
        return self.respond(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """The response streamed a word at a time (or in `stream_chunks` pieces), then
        the whole response."""
        response = self.respond(request)
        if self.stream_chunks is not None:
            for piece in chunked(response, self.stream_chunks):
                yield piece
            return
        pieces = response.text.split(" ") if response.text else []
        for i, word in enumerate(pieces):  # a word at a time, as a person would see it typed
            yield TextDelta(word if i == len(pieces) - 1 else word + " ")
        yield response

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The response to `request` (what `complete` returns). A routing choice
        (`Agent(routing="choice")`) is answered with the handoff the same rules would make
        had the routes been offered as tools, as the choice's JSON."""
        self.requests.append(request)
        if request.output is not None and request.output.name == CHOICE_NAME:
            return self._choose(request)
        return self._respond(request)

    def _choose(self, request: ModelRequest) -> ModelResponse:
        assert request.output is not None
        props = request.output.schema.get("properties", {})
        targets = [t for t in props.get("route", {}).get("enum", ()) if t != request.agent]
        team = self.fallback.team
        routes = (team.plan(request.agent).routes_by_target
                  if team is not None and request.agent in team else {})
        specs = tuple(routes[t].spec if t in routes else ToolSpec(
            f"transfer_to_{t}", "", {"type": "object", "properties": {
                "reason": {"type": "string", "description": REASON_DESCRIPTION}}})
            for t in targets)
        by_tool = {s.name: t for s, t in zip(specs, targets, strict=True)}
        answer = self._respond(dataclasses.replace(request, tools=specs, output=None))
        picked: dict[str, Any] = {"route": request.agent, "reason": "I can answer it."}
        for c in answer.tool_calls:
            if c.name in by_tool:
                args = json.loads(c.arguments or "{}")
                target = by_tool[c.name]
                picked = {"route": target, "reason": str(args.pop("reason", ""))}
                if target in props:
                    picked[target] = args.get("payload", args) or None
                break
        for key in props:
            picked.setdefault(key, None)
        return self._text(json.dumps(picked, ensure_ascii=False))

    def _respond(self, request: ModelRequest) -> ModelResponse:
        seen = Seen(request)
        for rule in self.rules_for(request.agent):
            found = rule.match(seen.text)
            if found is None:
                continue
            values = {**seen.values, **found, **seen.fixed}
            try:
                response = self._apply(rule, seen, values)
            except SKIP:
                continue
            if response is not None:
                return response
        if not seen.latest:
            move = self.fallback.move(seen)
            if move is not None:
                return self._response(move.text, move.calls)
        if request.output is not None and self.default is None:
            # An object is asked for (an output type, a classifier): one that fits.
            return self._text(json.dumps(placeholder_object(request.output.schema),
                                         ensure_ascii=False))
        return self._text(self._default_answer(seen))

    def _apply(self, rule: Rule, seen: Seen, values: dict[str, Any]) -> ModelResponse | None:
        if rule.answer is not None:
            return self._text(str(fill(rule.answer, values)))
        if rule.call is not None:
            if rule.call not in seen.offered or rule.call in seen.done:
                return None
            args = fill(rule.args, values) if rule.args is not None else {}
            return self._call(rule.call, dict(args), fill(rule.say, values))
        assert rule.handoff is not None
        name = seen.handoff_tool(rule.handoff)
        if name is None or name in seen.done or rule.handoff == seen.receiver:
            return None
        reason = (fill(rule.reason, values) if rule.reason is not None
                  else f"The message matched {values.get('keyword') or values.get('match')}.")
        args = {"reason": str(reason)}
        if rule.payload is not None:
            payload = fill(rule.payload, values)
            if payload_schema(seen.offered[name])[1] or not isinstance(payload, dict):
                args["payload"] = payload
            else:
                args.update(payload)
        if asks_task(seen.offered[name]):
            args["task"] = str(fill(rule.task, values)) if rule.task is not None else seen.text
        return self._call(name, args, fill(rule.say, values))

    def _default_answer(self, seen: Seen) -> str:
        values = {**seen.values, **seen.fixed}
        if self.default is not None:
            try:
                return str(fill(self.default, values))
            except SKIP:
                pass
        if seen.latest:
            return self.fallback.results(seen)
        return DEFAULT_ANSWER.format(**self.fallback.placeholder(seen))

    def _text(self, text: str) -> ModelResponse:
        return ModelResponse(text, (), Usage(0, 0, 1), "rules")

    def _call(self, name: str, args: Mapping[str, Any], say: Any = None) -> ModelResponse:
        return self._response(str(say) if say is not None else "", [(name, args)])

    def _response(self, text: str, calls: Sequence[tuple[str, Mapping[str, Any]]]
                  ) -> ModelResponse:
        made = tuple(ToolCall(f"rule_{next(self._ids)}", name, json.dumps(args, default=str))
                     for name, args in calls)
        return ModelResponse(text, made, Usage(0, 0, 1), "rules")
