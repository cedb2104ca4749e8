"""Guardrails: checks on the text an agent receives (input) or produces (output).

A guardrail is a sync or async function `(ctx, text) -> GuardrailResult`. It belongs to
one agent and is never inherited through a handoff: the target's own guardrails apply to
the message it inherits. A trip ends the turn FAILED with code `guardrail_tripped`, or
hands off to the team's fallback when there is one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .context import RunContext

if TYPE_CHECKING:
    import pydantic


@dataclass(slots=True, frozen=True)
class GuardrailResult:
    """Pass, or trip with a message saying what was wrong."""

    tripped: bool = False
    message: str = ""

    @classmethod
    def ok(cls) -> GuardrailResult:
        """The result of a guardrail that lets the text through."""
        return _PASS

    @classmethod
    def trip(cls, message: str) -> GuardrailResult:
        """The result of a guardrail that stops the text, saying why (`message`)."""
        return cls(True, message)


_PASS = GuardrailResult()

Guardrail = Callable[[RunContext, str], Any]
"""`(ctx, text) -> GuardrailResult` (or an awaitable of one)."""


def guardrail_name(g: Any) -> str:
    """A readable name for events and errors."""
    return getattr(g, "name", None) or getattr(g, "__name__", None) or type(g).__name__


class max_length:
    """Trips when the text is longer than `limit` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.name = f"max_length({limit})"

    def __call__(self, ctx: RunContext, text: str) -> GuardrailResult:
        if len(text) > self.limit:
            return GuardrailResult.trip(
                f"The text is {len(text)} characters long; the limit is {self.limit}."
            )
        return _PASS


class min_length:
    """Trips when the text (stripped) is shorter than `limit` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.name = f"min_length({limit})"

    def __call__(self, ctx: RunContext, text: str) -> GuardrailResult:
        if len(text.strip()) < self.limit:
            return GuardrailResult.trip(f"The text is shorter than {self.limit} characters.")
        return _PASS


class deny_patterns:
    """Trips when any of the regular expressions matches (case-insensitive by default)."""

    def __init__(self, patterns: Iterable[str], flags: int = re.IGNORECASE,
                 message: str | None = None) -> None:
        self.patterns = [re.compile(p, flags) for p in patterns]
        self.message = message
        self.name = "deny_patterns"

    def __call__(self, ctx: RunContext, text: str) -> GuardrailResult:
        for p in self.patterns:
            if p.search(text):
                return GuardrailResult.trip(
                    self.message or f"The text matches a denied pattern ({p.pattern!r})."
                )
        return _PASS


class json_output:
    """Trips unless the text is JSON that validates against the pydantic `model`."""

    def __init__(self, model: type[pydantic.BaseModel]) -> None:
        self.model = model
        self.name = f"json_output({model.__name__})"

    def __call__(self, ctx: RunContext, text: str) -> GuardrailResult:
        import pydantic

        try:
            self.model.model_validate_json(text)
        except pydantic.ValidationError as exc:
            errors = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or 'value'}: {e['msg']}"
                for e in exc.errors()[:5]
            )
            return GuardrailResult.trip(
                f"The answer is not valid {self.model.__name__} JSON: {errors}."
            )
        return _PASS
