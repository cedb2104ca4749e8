"""What model calls cost: a price table (per model, US dollars per million tokens) and
the cost of a `Usage` under it.

    {"gpt-4.1-mini": {"input": 0.40, "cached_input": 0.10, "output": 1.60},
     "claude-sonnet-4-6": {"input": 3.00, "cached_input": 0.30, "cache_write": 3.75,
                           "output": 15.00}}

No table ships with the library: prices change and differ by contract, so a cost is shown
only where the user gave one (`handoffs eval --prices`, `handoffs stats --prices`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.usage import Usage
from ..errors import HandoffsError

FIELDS = ("input", "cached_input", "cache_write", "output")
"""A price's fields, each US dollars per million tokens."""


@dataclass(slots=True, frozen=True)
class Price:
    """One model's prices, US dollars per million tokens."""

    input: float
    """Input tokens neither read from nor written to the prompt cache."""
    output: float
    """Output tokens, reasoning included."""
    cached_input: float | None = None
    """Input tokens read from the prompt cache; None: the `input` price."""
    cache_write: float | None = None
    """Input tokens written to the prompt cache (Anthropic, Bedrock); None: the `input`
    price (OpenAI and Gemini charge no write)."""

    def cost(self, usage: Usage) -> float:
        """What `usage` cost, in US dollars: uncached input, cache reads, cache writes and
        output, each at its price (`Usage.input_tokens` counts all three inputs)."""
        read, write = usage.cache_read_tokens, usage.cache_write_tokens
        plain = max(usage.input_tokens - read - write, 0)
        cached = self.input if self.cached_input is None else self.cached_input
        written = self.input if self.cache_write is None else self.cache_write
        return (plain * self.input + read * cached + write * written
                + usage.output_tokens * self.output) / 1e6


@dataclass(slots=True, frozen=True)
class Prices:
    """A price table: model name -> `Price`. A model is found by its name as the
    provider reports it (`gpt-4.1-mini-2025-04-14`), as configured
    (`openai:gpt-4.1-mini`: the provider's prefix is dropped), or by the longest name in
    the table it starts with (`gpt-4.1-mini` prices its dated snapshots)."""

    models: Mapping[str, Price]

    @classmethod
    def load(cls, path: str | Path) -> Prices:
        """The table in the JSON file at `path` (see the module's docstring); a clear
        `invalid_prices` error for anything else."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise HandoffsError(f"Cannot read the price table {path}: {exc.strerror}.",
                                code="invalid_prices") from exc
        except ValueError as exc:
            raise HandoffsError(f"The price table {path} is not JSON: {exc}.",
                                code="invalid_prices") from exc
        return cls.parse(data, str(path))

    @classmethod
    def parse(cls, data: Any, where: str = "the price table") -> Prices:
        """The table from JSON data: an object of model names, each an object with
        `input` and `output` (and optionally `cached_input`, `cache_write`), US dollars
        per million tokens."""
        if not isinstance(data, dict) or not data:
            raise HandoffsError(
                f"{where} must be a JSON object of model names, each with its prices per "
                'million tokens, e.g. {"gpt-4.1-mini": {"input": 0.4, "cached_input": 0.1, '
                '"output": 1.6}}.', code="invalid_prices")
        models: dict[str, Price] = {}
        for name, entry in data.items():
            if not isinstance(entry, dict):
                raise HandoffsError(f"{where}: {name!r} must be an object of prices, not "
                                    f"{entry!r}.", code="invalid_prices")
            unknown = sorted(set(entry) - set(FIELDS))
            missing = [f for f in ("input", "output") if f not in entry]
            if unknown or missing:
                what = (f"has unknown fields {', '.join(unknown)}" if unknown
                        else f"lacks {', '.join(missing)}")
                raise HandoffsError(f"{where}: {name!r} {what}; its fields are "
                                    f"{', '.join(FIELDS)} (input and output required).",
                                    code="invalid_prices")
            values: dict[str, float] = {}
            for key, value in entry.items():
                if (isinstance(value, bool) or not isinstance(value, int | float)
                        or not math.isfinite(value) or value < 0):
                    raise HandoffsError(f"{where}: {name}.{key} must be a price (a number "
                                        f"of dollars per million tokens, 0 or more), not "
                                        f"{value!r}.", code="invalid_prices")
                values[key] = float(value)
            models[name] = Price(**values)
        return cls(models)

    def price_of(self, model: str) -> Price | None:
        """The price of `model` (see the class), or None when the table has none."""
        models = self.models
        found = models.get(model)
        if found is not None:
            return found
        name = model.partition(":")[2] if ":" in model else model
        found = models.get(name)
        if found is not None:
            return found
        best = max((k for k in models if name.startswith(k)), key=len, default=None)
        return None if best is None else models[best]

    def cost(self, by_model: Mapping[str, Usage]) -> tuple[float, list[str]]:
        """What the usage of each model cost, summed, and the models (with tokens) the
        table has no price for (their tokens are left out of the sum)."""
        total = 0.0
        unpriced: list[str] = []
        for model, usage in by_model.items():
            price = self.price_of(model)
            if price is None:
                if usage.input_tokens or usage.output_tokens:
                    unpriced.append(model)
                continue
            total += price.cost(usage)
        return total, unpriced


def dollars(value: float) -> str:
    """`$0.0123` (four decimals: a conversation costs cents or less)."""
    return f"${value:.4f}"
