"""The model `run` and `chat` use when no real one is configured: offline, no key.

`KeywordModel` is deterministic and never runs out. It reads the user's latest message,
hands off along a declared route when the words of the message match the target better
than the current agent, fills a route's payload from what it finds in the message, calls
a tool whose name the message mentions when it can fill the tool's arguments, and
otherwise answers from a template that says who is speaking. It shows how a team moves,
not what a model would say.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from ..core.messages import AssistantMessage, Message, ToolCall, ToolResult, UserMessage
from ..core.team import Route, Team
from ..models.base import Model, ModelRequest, ModelResponse, TextDelta, Usage

_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_HUMAN = frozenset(("human", "perso", "opera", "someo", "peopl"))
"""Stems that ask for a person: the offline model escalates to a human agent on them."""
_IDENT = re.compile(r"\b[A-Za-z]+-?\d+[\w-]*\b")
_NUMBER = re.compile(r"(?<![\w-])\d+(?:\.\d+)?(?![\w-])")
_STOP = frozenset((
    "the", "and", "for", "you", "your", "with", "this", "that", "have", "from", "what",
    "when", "can", "are", "was", "were", "not", "but", "all", "any", "our", "out", "about",
    "into", "them", "they", "their", "there", "here", "please", "thanks", "thank", "hello",
    "also", "just", "want", "need", "help", "hand", "handle", "handles", "handoff",
    "transfer", "agent", "agents", "user", "customer", "customers", "question", "questions",
    "message", "messages", "answer", "answers", "next", "turn", "conversation"))


def offline_model(team: Team) -> Model:
    """The offline model for `team`: routes by keywords, answers from templates.

    This is the one place the CLI chooses its offline model.
    """
    return KeywordModel(team)


def stems(text: str) -> set[str]:
    """The content words of `text`, cut to a common stem ("charged", "charges": "charg")."""
    return {w[:5] for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP}


class KeywordModel:
    """A deterministic `Model` that routes by keywords and answers from templates."""

    def __init__(self, team: Team, words_per_delta: int = 1) -> None:
        self.team = team
        self.words_per_delta = words_per_delta
        self._ids = 0
        self._topics: dict[str, set[str]] = {
            a.name: stems(" ".join((a.name, a.label, a.description))) for a in team.agents}

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return self.respond(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = self.respond(request)
        words = response.text.split(" ") if response.text else []
        n = max(1, self.words_per_delta)
        for i in range(0, len(words), n):
            piece = " ".join(words[i:i + n])
            yield TextDelta(piece if i + n >= len(words) else piece + " ")
        yield response

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The response to one request (pure apart from the call ids it numbers)."""
        agent = self.team.get(request.agent)
        label = agent.label if agent is not None else request.agent
        results = _latest_results(request.messages, request.agent)
        if results:
            return self._text(f"{label} here. " + " ".join(self._said(r) for r in results))
        message = _last_user_text(request.messages) or ""
        text = f"{message}\n{_payload_text(request.system)}"
        routes = self.team.plan(request.agent).routes if request.agent in self.team else {}
        handoff = self._route(request, routes, message) if message else None
        if handoff is not None:
            return handoff
        calls = self._tool_calls(request, set(routes), text)
        if calls:
            return ModelResponse("", tuple(calls), Usage(0, 0, 1), "offline")
        topic = f" ({agent.description.rstrip('.')})" if agent and agent.description else ""
        quoted = f' You said: "{message}".' if message else ""
        return self._text(f"{label} here{topic}.{quoted} (Offline model: a real model "
                          "would answer now; set --model or HANDOFFS_MODEL.)")

    def _route(self, request: ModelRequest, routes: Mapping[str, Route],
               message: str) -> ModelResponse | None:
        """A handoff toward the agent the message is most about, if that is not us."""
        words = stems(message)
        own = len(words & self._topics.get(request.agent, set()))
        scores = {name: len(words & topic) for name, topic in self._topics.items()}
        for route in routes.values():  # a route's own description counts for its target
            name = route.target.name
            scores[name] = max(scores[name], len(words & stems(route.spec.description)))
        offered = {spec.name for spec in request.tools}
        if words & _HUMAN:  # "can a person look at this?": escalate when a route allows
            for route in routes.values():
                if route.target.is_human and route.tool_name in offered:
                    return self._transfer(route, message)
        for name in sorted(scores, key=lambda n: -scores[n]):
            if scores[name] <= own:
                break
            hop = self._first_hop(request.agent, name, offered)
            if hop is not None and name != request.agent:
                return self._transfer(hop, message)
        return None

    def _first_hop(self, source: str, goal: str, offered: set[str]) -> Route | None:
        """The offered route that starts the shortest path from `source` to `goal`."""
        start = [r for r in self.team.plan(source).routes.values() if r.tool_name in offered]
        seen = {source}
        frontier = [(r.target.name, r) for r in start]
        while frontier:
            following: list[tuple[str, Route]] = []
            for name, first in frontier:
                if name == goal:
                    return first
                if name in seen:
                    continue
                seen.add(name)
                following.extend((r.target.name, first)
                                 for r in self.team.plan(name).routes.values()
                                 if not r.handoff.returns)
            frontier = following
        return None

    def _transfer(self, route: Route, message: str) -> ModelResponse:
        args: dict[str, Any] = {"reason": f"The request is for {route.target.label}."}
        if route.handoff.returns:  # a delegation says what the delegate must do
            args["task"] = message
        schema = route.spec.parameters["properties"].get("payload")
        if schema is not None:
            payload = fill(schema, message)
            missing = [k for k in schema.get("required", ()) if k not in payload]
            if missing:
                return self._text(f"To hand this to {route.target.label} I need: "
                                  f"{', '.join(missing)}.")
            args["payload"] = payload
        return ModelResponse("", (self._call(route.tool_name, args),), Usage(0, 0, 1),
                             "offline")

    def _tool_calls(self, request: ModelRequest, handoff_tools: set[str],
                    text: str) -> list[ToolCall]:
        words = stems(text)
        calls = []
        for spec in request.tools:
            if spec.name in handoff_tools or not words & stems(spec.name.replace("_", " ")):
                continue
            args = fill(spec.parameters, text)
            if all(k in args for k in spec.parameters.get("required", ())):
                calls.append(self._call(spec.name, args))
        return calls

    def _said(self, result: ToolResult) -> str:
        if result.handoff == "rejected":
            return f"(My handoff was refused: {result.text})"
        plan = self.team.plan(result.agent) if result.agent in self.team else None
        route = plan.routes.get(result.name) if plan is not None else None
        if route is not None:
            return f"{route.target.label} says: {result.text}"
        return f"{result.name}: {result.text}"

    def _call(self, name: str, args: Mapping[str, Any]) -> ToolCall:
        self._ids += 1
        return ToolCall(f"offline_{self._ids}", name, json.dumps(args))

    @staticmethod
    def _text(text: str) -> ModelResponse:
        return ModelResponse(text, (), Usage(0, 0, 1), "offline")


def fill(schema: Mapping[str, Any], text: str) -> dict[str, Any]:
    """Arguments for an object schema, taken from `text` where a value can be found:
    identifiers like A-1001 for strings named like ids, numbers for numbers, the text
    itself for other strings. Properties with no value found are left out."""
    idents = _IDENT.findall(text)
    numbers = [float(n) for n in _NUMBER.findall(text)]
    args: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if kind == "string":
            if idents and any(h in key.lower() for h in ("id", "number", "order", "ref")):
                args[key] = idents[0]
            elif "enum" not in prop:
                args[key] = text.strip().splitlines()[0] if text.strip() else key
        elif kind in ("number", "integer") and numbers:
            args[key] = numbers[0] if kind == "number" else int(numbers[0])
        elif kind == "boolean":
            args[key] = False
    return args


def _last_user_text(messages: Sequence[Message]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, UserMessage):
            return m.text
    return None


def _latest_results(messages: Sequence[Message], agent: str) -> list[ToolResult]:
    """The results answering this agent's latest calls, if its calls are the last thing."""
    tail: list[ToolResult] = []
    for m in reversed(messages):
        if isinstance(m, ToolResult):
            tail.append(m)
            continue
        if isinstance(m, AssistantMessage) and m.agent == agent and m.tool_calls:
            return list(reversed(tail))
        break
    return []


def _payload_text(system: str) -> str:
    """The payload a handoff note carries (`Payload: {...}`), as text to search."""
    for line in system.splitlines():
        if line.startswith("Payload: "):
            try:
                value = json.loads(line[len("Payload: "):])
            except ValueError:
                return line
            return " ".join(_flatten(value))
    return ""


def _flatten(value: Any) -> Iterable[str]:
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _flatten(v)
    elif isinstance(value, list):
        for v in value:
            yield from _flatten(v)
    else:
        yield str(value)
