"""`RuleModel`: rules per agent, and what it does when no rule applies."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..core.messages import ToolCall
from ..errors import HandoffsError
from ..models.base import ModelRequest, ModelResponse, TextDelta, Usage, chunked
from .request import Seen, asks_task, is_handoff
from .rule import SKIP, Rule, Template, fill
from .words import STOP, mentions, words

DEFAULT_ANSWER = "{agent}: Thank you for your message. I've noted it and will help you with it."
DEFAULT_RESULT_ANSWER = "{agent}: Here is what I found: {result}"


class RuleModel:
    """A deterministic offline `Model`: rules per agent, keyword routing, templates.

    `rules` is one list for every agent or a mapping of agent name to its rules.
    `default` is the answer when nothing applies (a template; see the module's doc).
    `route=False` turns off the handoffs by name and description when no rule applies.
    """

    def __init__(self, rules: Sequence[Rule] | Mapping[str, Sequence[Rule]] = (), *,
                 default: Template = None, route: bool = True,
                 stream_chunks: int | None = None) -> None:
        if isinstance(rules, Mapping):
            self.rules: dict[str, tuple[Rule, ...]] | tuple[Rule, ...] = {
                agent: tuple(rs) for agent, rs in rules.items()}
        else:
            self.rules = tuple(rules)
        for rule in self._all_rules():
            if not isinstance(rule, Rule):
                raise HandoffsError(f"Not a Rule: {rule!r}.", code="invalid_rule")
        self.default = default
        self.route = route
        self.stream_chunks = stream_chunks
        """When streaming, yield the text in pieces of this many characters."""
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""
        self._ids = itertools.count(1)

    def _all_rules(self) -> list[Rule]:
        if isinstance(self.rules, dict):
            return [r for rs in self.rules.values() for r in rs]
        return list(self.rules)

    def rules_for(self, agent: str) -> tuple[Rule, ...]:
        if isinstance(self.rules, dict):
            return self.rules.get(agent, ())
        return self.rules

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return self.respond(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        for piece in chunked(self.respond(request), self.stream_chunks):
            yield piece

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The response to `request` (what `complete` returns)."""
        self.requests.append(request)
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
        if self.route and seen.first:
            response = self._route(seen)
            if response is not None:
                return response
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
            args["payload"] = fill(rule.payload, values)
        if asks_task(seen.offered[name]):
            args["task"] = str(fill(rule.task, values)) if rule.task is not None else seen.text
        return self._call(name, args, fill(rule.say, values))

    def _route(self, seen: Seen) -> ModelResponse | None:
        """Hand off to the offered target whose name or description the message mentions
        most (ties: the first offered); None when none is mentioned."""
        said = {w for w in words(seen.text) if w not in STOP}
        best: tuple[int, str, list[str]] | None = None
        for spec in seen.offered.values():
            if not is_handoff(spec) or "payload" in spec.parameters.get("required", ()):
                continue
            name_words = words(spec.name.removeprefix("transfer_to_").replace("_", " "))
            desc_words = words(spec.description)
            hits = sorted(w for w in said if mentions(w, desc_words + name_words))
            score = len(hits) + sum(1 for w in said if mentions(w, name_words))
            if hits and (best is None or score > best[0]) and spec.name not in seen.done:
                best = (score, spec.name, hits)
        if best is None:
            return None
        args = {"reason": f"The user mentions: {', '.join(best[2])}."}
        if asks_task(seen.offered[best[1]]):
            args["task"] = seen.text
        return self._call(best[1], args)

    def _default_answer(self, seen: Seen) -> str:
        values = {**seen.values, **seen.fixed}
        if self.default is not None:
            try:
                return str(fill(self.default, values))
            except SKIP:
                pass
        return (DEFAULT_RESULT_ANSWER if seen.result else DEFAULT_ANSWER).format(**seen.fixed)

    def _text(self, text: str) -> ModelResponse:
        return ModelResponse(text, (), Usage(0, 0, 1), "rules")

    def _call(self, name: str, args: Mapping[str, Any], say: Any = None) -> ModelResponse:
        call = ToolCall(f"rule_{next(self._ids)}", name, json.dumps(args, default=str))
        return ModelResponse(str(say) if say is not None else "", (call,), Usage(0, 0, 1),
                             "rules")
