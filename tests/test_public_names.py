"""Every public name is importable from where the README says, and `import handoffs`
stays light (the heavy names load on first use)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import handoffs

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

IMPORT = re.compile(r"^from (handoffs[\w.]*) import (\([^)]*\)|[^\n]+)", re.M)


def readme_imports() -> list[tuple[str, str]]:
    """(module, name) for every `from handoffs... import ...` in the README's python."""
    found: list[tuple[str, str]] = []
    for block in re.findall(r"```python\n(.*?)```", README, re.S):
        for module, names in IMPORT.findall(block):
            for name in names.strip("()").replace("\n", " ").split(","):
                name = name.split("#")[0].strip().split(" as ")[0]
                if name:
                    found.append((module, name))
    return found


def test_the_readme_imports_something() -> None:
    assert ("handoffs", "Runner") in readme_imports()
    assert ("handoffs.testing", "ScriptedModel") in readme_imports()


@pytest.mark.parametrize("module, name", readme_imports())
def test_every_name_the_readme_imports_is_importable(module: str, name: str) -> None:
    assert getattr(importlib.import_module(module), name) is not None


@pytest.mark.parametrize("name", handoffs.__all__)
def test_every_name_in_all_is_importable(name: str) -> None:
    assert getattr(handoffs, name) is not None


# Names the README's prose and tables use, importable from `handoffs` itself.
README_NAMES = [
    "Agent", "Handoff", "Team", "Runner", "HandoffPolicy", "RunResult", "HandoffRecord",
    "tool", "HandoffTo", "HumanAgent", "PlanStep", "Summarizer", "RunContext", "Model",
    "RetryPolicy", "register_provider", "get_model", "ScriptedModel", "RuleModel", "Rule",
    "SQLiteStore", "PostgresStore", "MemoryStore", "open_store", "max_length", "min_length",
    "deny_patterns", "json_output", "GuardrailResult",
]


@pytest.mark.parametrize("name", README_NAMES)
def test_names_the_readme_uses_are_exported_by_handoffs(name: str) -> None:
    assert name in handoffs.__all__
    assert getattr(handoffs, name) is not None


@pytest.mark.parametrize("module, names", [
    ("handoffs.testing", ["ScriptedModel", "RuleModel", "Rule", "reply", "call", "transfer",
                          "raw_call"]),
    ("handoffs.models", ["Model", "RetryPolicy", "register_provider", "get_model"]),
    ("handoffs.models.anthropic", ["AnthropicModel"]),
    ("handoffs.models.openai", ["OpenAIModel"]),
    ("handoffs.stores.transfer", ["fetch_session_tool"]),
    ("handoffs.stores", ["MemoryStore", "open_store"]),
])
def test_subpackages_export_what_the_readme_names(module: str, names: list[str]) -> None:
    loaded = importlib.import_module(module)
    for name in names:
        assert getattr(loaded, name) is not None, f"{module}.{name}"


def test_the_durable_stores_import_from_handoffs_stores() -> None:
    from handoffs.stores import PostgresStore, SQLiteStore  # type: ignore[attr-defined]

    assert SQLiteStore is handoffs.SQLiteStore and PostgresStore is handoffs.PostgresStore


def test_import_handoffs_stays_light() -> None:
    code = ("import sys, handoffs\n"
            "print(sorted(m for m in ('asyncio', 'pydantic', 'sqlite3', 'openai', 'anthropic')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
