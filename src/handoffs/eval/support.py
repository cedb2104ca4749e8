"""The support team's labelled conversations, shipped with the package."""

from __future__ import annotations

from pathlib import Path

from .cases import Case, load_cases

SUPPORT_CASES = Path(__file__).resolve().parent.parent / "examples" / "support_cases.jsonl"
"""The case file of the built-in support team (`handoffs.examples.support`): what
`handoffs eval` plays when given no case file for that team."""


def support_cases() -> list[Case]:
    """The support team's labelled conversations."""
    return load_cases(SUPPORT_CASES)


def example_cases(name: str) -> list[Case]:
    """The labelled conversations of the example team `name` (`support`, `airline`):
    `handoffs/examples/NAME_cases.jsonl`, what `handoffs eval` plays for that team when
    given no case file."""
    return load_cases(SUPPORT_CASES.with_name(f"{name}_cases.jsonl"))
