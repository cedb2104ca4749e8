"""`RuleModel`: an offline model that routes by keywords and answers from templates.

Where `ScriptedModel` plays a fixed script, `RuleModel` reacts to free text, so a demo,
a chat in the terminal or a web page can run with no provider and no key:

    model = RuleModel({
        "triage": [Rule(keywords=["charge", "invoice"], handoff="billing",
                        reason="Billing question: {text}")],
        "billing": [Rule(pattern=r"(?P<order>A-\\d+)", call="lookup_order",
                         args={"order_id": "{order}"}),
                    Rule(pattern=r"(?P<order>A-\\d+)",
                         answer="Order {order}: {lookup_order[status]}.")],
    })

Each request is answered by the first of the agent's rules that applies; a rule applies
when its `keywords` (any of them, at the start of a word, any case) and its `pattern` (a
regular expression, searched in any case) match the user's latest message, its tool or
handoff is offered, it was not already done since that message, and its templates can be
filled. With no rule applying, the model hands off by itself when the message mentions
words of a target's name or description (only the agent that received the message does,
so it never bounces), and otherwise answers politely. It never runs out of answers, and
the same conversation always gets the same responses.

Templates are `str.format` strings over: `agent`, `text` (the user's message), `source`
and `reason` (of the handoff that brought the agent, when there was one), `keyword` and
`match` (what matched) and the pattern's named groups, `result` (the latest tool result
since the message) and each tool's latest result by the tool's name, as parsed JSON when
it is JSON (`{lookup_order[amount]}`). A value that is exactly one placeholder keeps its
type (`"amount": "{lookup_order[amount]}"` sends a number). Any template may instead be
a function of that mapping; a missing key (KeyError, LookupError) skips the rule.
"""

from __future__ import annotations

import itertools
import json
import re
import string
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .core.handoff import Handoff
from .core.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from .core.team import DELEGATION_REASON_DESCRIPTION, REASON_DESCRIPTION
from .core.tools import ToolSpec
from .errors import HandoffsError
from .models.base import ModelRequest, ModelResponse, TextDelta, Usage, chunked

Template = Any
"""A `str.format` template, a mapping or list of templates, or a function of the mapping."""

DEFAULT_ANSWER = "{agent}: Thank you for your message. I've noted it and will help you with it."
DEFAULT_RESULT_ANSWER = "{agent}: Here is what I found: {result}"

_NOTE = re.compile(r"^(?:The conversation was handed to you by (.+?)|(.+?) asks you for a task) "
                   r"\((\w+)\)(?:: (.*)|\.)$", re.M)
_WHOLE = re.compile(r"\{([^{}:!]+)\}")
_REASONS = (REASON_DESCRIPTION, DELEGATION_REASON_DESCRIPTION)
_WORD = re.compile(r"[^\W_]+")
_FORMATTER = string.Formatter()
_SKIP = (LookupError, AttributeError, ValueError, TypeError)
"""What a template that cannot be filled raises: the rule is skipped."""

_STOP_WORDS = (
    "a about after all also am an and any are as at be been but by can could did do does "
    "doesn for from get got had has have hello hi how i if in into is it its just keep keeps "
    "me my no not now of on or our please so some still than thank thanks that the their "
    "them then there this to too up us very was we were what when where which who why will "
    "with would yes you your hand conversation ask")
_STOP = frozenset(_STOP_WORDS.split())


@dataclass(slots=True, frozen=True)
class Rule:
    """When the user's message matches, do one thing: hand off, call a tool, or answer."""

    keywords: str | Sequence[str] = ()
    """Words or phrases, any of which must occur (case-insensitive, at the start of a
    word: "charge" matches "charged"). Empty: no keyword needed."""
    pattern: str | None = None
    """A regular expression that must also be found (case-insensitive); its named groups
    fill the templates."""
    handoff: str | None = None
    """Hand off to this agent (or call this handoff tool by its name), if offered."""
    call: str | None = None
    """Call this tool, if offered."""
    answer: Template = None
    """Answer with this template."""
    args: Template = None
    """For `call`: the arguments, a mapping of templates (or a function returning one)."""
    reason: Template = None
    """For `handoff`: the reason given (default: what the message matched)."""
    payload: Template = None
    """For `handoff`: the payload, a mapping of templates (or a function returning one)."""
    task: Template = None
    """For a `handoff` that delegates (its tool asks for a task): the task (default: the
    user's message)."""
    say: Template = None
    """For `handoff` and `call`: text sent with the call ("Let me get a colleague.")."""
    _keywords: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        actions = [a for a in ("handoff", "call", "answer") if getattr(self, a) is not None]
        if len(actions) != 1:
            raise HandoffsError(
                "A Rule does exactly one thing: give it one of handoff=, call= or answer= "
                f"(it has {', '.join(actions) or 'none'}).", code="invalid_rule")
        if self.args is not None and self.call is None:
            raise HandoffsError("Rule(args=...) goes with call=.", code="invalid_rule")
        if (self.reason is not None or self.payload is not None or self.task is not None
                ) and self.handoff is None:
            raise HandoffsError("Rule(reason=..., payload=..., task=...) go with handoff=.",
                                code="invalid_rule")
        if self.say is not None and self.answer is not None:
            raise HandoffsError("Rule(say=...) goes with handoff= or call=; an answer is "
                                "already text.", code="invalid_rule")
        words = (self.keywords,) if isinstance(self.keywords, str) else tuple(self.keywords)
        keywords = None
        if words:
            alternatives = "|".join(r"\s+".join(map(re.escape, w.split())) for w in words)
            keywords = re.compile(rf"(?<!\w)(?:{alternatives})", re.IGNORECASE)
        try:
            pattern = re.compile(self.pattern, re.IGNORECASE) if self.pattern else None
        except re.error as exc:
            raise HandoffsError(f"Rule pattern {self.pattern!r} is not a valid regular "
                                f"expression: {exc}.", code="invalid_rule") from exc
        object.__setattr__(self, "keywords", words)
        object.__setattr__(self, "_keywords", keywords)
        object.__setattr__(self, "_pattern", pattern)

    def match(self, text: str) -> dict[str, Any] | None:
        """The template values this rule adds for `text`, or None when it does not match."""
        found: dict[str, Any] = {}
        if self._keywords is not None:
            k = self._keywords.search(text)
            if k is None:
                return None
            found["keyword"] = k.group(0)
        if self._pattern is not None:
            m = self._pattern.search(text)
            if m is None:
                return None
            found["match"] = m.group(0)
            found.update({k: v for k, v in m.groupdict().items() if v is not None})
        return found


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
        seen = _Seen(request)
        for rule in self.rules_for(request.agent):
            found = rule.match(seen.text)
            if found is None:
                continue
            values = {**seen.values, **found, **seen.fixed}
            try:
                response = self._apply(rule, seen, values)
            except _SKIP:
                continue
            if response is not None:
                return response
        if self.route and seen.first:
            response = self._route(seen)
            if response is not None:
                return response
        return self._text(self._default_answer(seen))

    def _apply(self, rule: Rule, seen: _Seen, values: dict[str, Any]) -> ModelResponse | None:
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
        if _asks_task(seen.offered[name]):
            args["task"] = str(fill(rule.task, values)) if rule.task is not None else seen.text
        return self._call(name, args, fill(rule.say, values))

    def _route(self, seen: _Seen) -> ModelResponse | None:
        """Hand off to the offered target whose name or description the message mentions
        most (ties: the first offered); None when none is mentioned."""
        words = {w for w in _words(seen.text) if w not in _STOP}
        best: tuple[int, str, list[str]] | None = None
        for spec in seen.offered.values():
            if not _is_handoff(spec) or "payload" in spec.parameters.get("required", ()):
                continue
            name_words = _words(spec.name.removeprefix("transfer_to_").replace("_", " "))
            desc_words = _words(spec.description)
            hits = sorted(w for w in words if _mentions(w, desc_words + name_words))
            score = len(hits) + sum(1 for w in words if _mentions(w, name_words))
            if hits and (best is None or score > best[0]) and spec.name not in seen.done:
                best = (score, spec.name, hits)
        if best is None:
            return None
        args = {"reason": f"The user mentions: {', '.join(best[2])}."}
        if _asks_task(seen.offered[best[1]]):
            args["task"] = seen.text
        return self._call(best[1], args)

    def _default_answer(self, seen: _Seen) -> str:
        values = {**seen.values, **seen.fixed}
        if self.default is not None:
            try:
                return str(fill(self.default, values))
            except _SKIP:
                pass
        return (DEFAULT_RESULT_ANSWER if seen.result else DEFAULT_ANSWER).format(**seen.fixed)

    def _text(self, text: str) -> ModelResponse:
        return ModelResponse(text, (), Usage(0, 0, 1), "rules")

    def _call(self, name: str, args: Mapping[str, Any], say: Any = None) -> ModelResponse:
        call = ToolCall(f"rule_{next(self._ids)}", name, json.dumps(args, default=str))
        return ModelResponse(str(say) if say is not None else "", (call,), Usage(0, 0, 1),
                             "rules")


class _Seen:
    """What a request shows: the user's message, who received it, what the agent already
    did since, and the results it got."""

    __slots__ = ("done", "first", "fixed", "offered", "receiver", "result", "text", "values")

    def __init__(self, request: ModelRequest) -> None:
        messages = list(request.messages)
        agent = request.agent
        start = 0
        self.text = ""
        self.receiver: str | None = None
        for i in range(len(messages) - 1, -1, -1):
            m = messages[i]
            if isinstance(m, UserMessage):
                self.text, self.receiver, start = m.text, m.agent, i + 1
                break
        source = reason = ""
        note = _NOTE.search(request.system)
        if note is not None:
            source, reason = note.group(1) or note.group(2), note.group(4) or ""
        if not self.text:
            self.text = reason
        self.first = self.receiver == agent
        """True when this agent received the message itself (no handoff brought it)."""
        self.offered: dict[str, ToolSpec] = {t.name: t for t in request.tools}
        self.done: set[str] = set()
        self.values: dict[str, Any] = {}
        self.result = ""
        for m in messages[start:]:
            if isinstance(m, AssistantMessage) and m.agent == agent:
                self.done.update(c.name for c in m.tool_calls)
            elif isinstance(m, ToolResult) and m.agent == agent:
                self.result = m.text
                self.values[m.name] = _parsed(m.text)
        self.fixed = {"agent": agent, "text": self.text, "source": source, "reason": reason,
                      "result": self.result}

    def handoff_tool(self, target: str) -> str | None:
        """The offered tool that hands off to `target` (an agent or a tool name)."""
        for name in (Handoff.default_tool_name(target), target):
            if name in self.offered:
                return name
        return None


def fill(template: Template, values: Mapping[str, Any]) -> Any:
    """`template` filled from `values` (see the module's doc); raises on a missing key."""
    if callable(template):
        return template(values)
    if isinstance(template, str):
        whole = _WHOLE.fullmatch(template)
        if whole is not None:
            return _FORMATTER.get_field(whole.group(1), (), values)[0]
        return _FORMATTER.vformat(template, (), values)
    if isinstance(template, Mapping):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list | tuple):
        return [fill(v, values) for v in template]
    return template


def _parsed(text: str) -> Any:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, dict | list) else text


def _is_handoff(spec: ToolSpec) -> bool:
    reason = spec.parameters.get("properties", {}).get("reason")
    return isinstance(reason, dict) and reason.get("description") in _REASONS


def _asks_task(spec: ToolSpec) -> bool:
    """True for a delegation's tool: it needs a `task` argument."""
    return "task" in spec.parameters.get("required", ())


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) >= 3 or not w.isascii()]


def _mentions(word: str, words: Sequence[str]) -> bool:
    """True when `word` (from the message) names one of `words`: the same word, one a
    prefix of the other (4+ letters), or a shared stem of 5+ letters ("charged" and
    "charges"); words in other scripts match when one contains the other."""
    for w in words:
        if w == word:
            return True
        if not word.isascii() or not w.isascii():
            if w in word or word in w:
                return True
            continue
        if min(len(w), len(word)) >= 4 and (w.startswith(word) or word.startswith(w)):
            return True
        if w[:5] == word[:5] and len(w) >= 5 and len(word) >= 5:
            return True
    return False


__all__ = ["DEFAULT_ANSWER", "Rule", "RuleModel", "fill"]
