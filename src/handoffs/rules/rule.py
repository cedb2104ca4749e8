"""`Rule`: when the user's message matches, do one thing; and the templates rules fill."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import HandoffsError

Template = Any
"""A `str.format` template, a mapping or list of templates, or a function of the mapping."""

_WHOLE = re.compile(r"\{([^{}:!]+)\}")
_FORMATTER = string.Formatter()
SKIP = (LookupError, AttributeError, ValueError, TypeError)
"""What a template that cannot be filled raises: the rule is skipped."""


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


class Fields:
    """The session's shared memory or context as templates read them: by attribute or by
    key alike (`{context.seat_number}`, `{shared[confirmation]}`, `{shared.confirmation}`),
    from a mapping, a pydantic model or any object. A name that is not there, or is None,
    is missing: the rule that asks for it is skipped."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def __getitem__(self, name: str) -> Any:
        value = self._value
        if isinstance(value, Mapping):
            found = value[name]
        else:
            try:
                found = getattr(value, name)
            except AttributeError:
                raise KeyError(name) from None
        if found is None:
            raise KeyError(name)
        return found

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __contains__(self, name: str) -> bool:
        try:
            self[name]
        except KeyError:
            return False
        return True

    def __format__(self, spec: str) -> str:
        return format(self._value, spec)

    def __repr__(self) -> str:
        return f"Fields({self._value!r})"


def fill(template: Template, values: Mapping[str, Any]) -> Any:
    """`template` filled from `values` (see `handoffs.rules`); raises on a missing key."""
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
