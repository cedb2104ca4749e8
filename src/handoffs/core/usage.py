"""Tokens spent by model calls, counted apart: input (cached or not), cache reads and
writes, output and reasoning. A response carries one; turns, agents, models and handoff
records sum them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Usage:
    """Tokens spent; summed per agent and per turn on `RunResult.usage`.

    As OpenTelemetry's GenAI conventions count them: `input_tokens` is every token the
    model read, cached or not, and `cache_read_tokens` / `cache_write_tokens` say how many
    of them came from, or went into, the provider's prompt cache; `output_tokens` is every
    token it wrote, `reasoning_tokens` of them spent thinking. An adapter whose provider
    counts cache tokens apart (Anthropic) adds them into `input_tokens` and keeps the
    parts here, so a cost is `(input - read - write) x price + read x read price + write
    x write price + output x output price`.
    """

    input_tokens: int = 0
    """Prompt tokens, cached ones included, as the provider counted them (0 when it did
    not say)."""
    output_tokens: int = 0
    """Completion tokens, reasoning included, as the provider counted them."""
    requests: int = 0
    """Model calls made."""
    cache_read_tokens: int = 0
    """Of `input_tokens`, those read from the provider's prompt cache (0: none, or not
    said)."""
    cache_write_tokens: int = 0
    """Of `input_tokens`, those written to the provider's prompt cache (Anthropic's cache
    creation; 0 for providers that cache without charging a write)."""
    reasoning_tokens: int = 0
    """Of `output_tokens`, those spent on reasoning the answer does not show."""

    def add(self, other: Usage) -> None:
        """Add another count to this one (in place)."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.requests += other.requests
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.reasoning_tokens += other.reasoning_tokens

    def copy(self) -> Usage:
        """A count of its own with the same numbers (this one may go on counting)."""
        return Usage(self.input_tokens, self.output_tokens, self.requests,
                     self.cache_read_tokens, self.cache_write_tokens, self.reasoning_tokens)

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, int]:
        """The counts as JSON-ready data (the cache and reasoning counts only when not 0;
        `from_dict` reads it back)."""
        d = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
             "requests": self.requests}
        if self.cache_read_tokens:
            d["cache_read_tokens"] = self.cache_read_tokens
        if self.cache_write_tokens:
            d["cache_write_tokens"] = self.cache_write_tokens
        if self.reasoning_tokens:
            d["reasoning_tokens"] = self.reasoning_tokens
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Usage:
        """Counts from `to_dict()`'s data."""
        return cls(int(d.get("input_tokens", 0)), int(d.get("output_tokens", 0)),
                   int(d.get("requests", 0)), int(d.get("cache_read_tokens", 0)),
                   int(d.get("cache_write_tokens", 0)), int(d.get("reasoning_tokens", 0)))
