"""The API reference is complete: every name a package exports is documented by a
`::: path` directive of docs/reference/, and every public method and property of an
exported class says what it is for (mkdocstrings renders an empty entry otherwise)."""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import pytest

from .snippets import DOCS, ROOT

EXPORTING = ["handoffs", "handoffs.testing", "handoffs.models", "handoffs.stores",
             "handoffs.rules", "handoffs.mcp", "handoffs.telemetry", "handoffs.server",
             "handoffs.temporal"]
"""The packages whose `__all__` is the public API."""

DIRECTIVE = re.compile(r"^::: ([\w.]+)[ \t]*\n((?:[ \t]+.*\n?)*)", re.M)


def _resolve(path: str) -> Any:
    try:
        return importlib.import_module(path)
    except ImportError:
        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name)


def documented() -> set[int]:
    """The ids of every object a reference page renders."""
    found: set[int] = set()
    for page in sorted((DOCS / "reference").glob("*.md")):
        for m in DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            obj = _resolve(m.group(1))
            members = re.search(r"members:\s*\[([^\]]*)\]", m.group(2))
            if inspect.ismodule(obj):
                names = ([n.strip() for n in members.group(1).split(",") if n.strip()]
                         if members else [n for n in vars(obj) if not n.startswith("_")])
                found.update(id(getattr(obj, n)) for n in names)
            else:
                found.add(id(obj))
    return found


def exported() -> list[tuple[str, str]]:
    pytest.importorskip("fastapi")  # handoffs.server needs the server extra
    return [(module, name) for module in EXPORTING
            for name in importlib.import_module(module).__all__ if not name.startswith("__")]


def test_every_exported_name_is_in_the_reference() -> None:
    shown = documented()
    missing = [f"{module}.{name}" for module, name in exported()
               if id(getattr(importlib.import_module(module), name)) not in shown]
    assert not missing, f"not in docs/reference/: {missing}"


def test_every_reference_page_is_in_the_nav_and_so_is_the_stores_page() -> None:
    text = (ROOT / "mkdocs.yml").read_text().split("\nnav:", 1)[1]
    for page in (DOCS / "reference").glob("*.md"):
        assert f"reference/{page.name}" in text, page.name
    assert ": stores.md" in text


def test_public_methods_of_exported_classes_say_what_they_are_for() -> None:
    bare: list[str] = []
    seen: set[int] = set()
    for module, name in exported():
        cls = getattr(importlib.import_module(module), name)
        if not inspect.isclass(cls) or id(cls) in seen or not cls.__module__.startswith(
                "handoffs"):
            continue
        seen.add(id(cls))
        if not inspect.getdoc(cls):
            bare.append(name)
        for attr, value in vars(cls).items():
            if attr.startswith("_"):
                continue
            func = value.fget if isinstance(value, property) else value
            func = getattr(func, "__func__", func)
            if (callable(func) or isinstance(value, property)) and not (
                    getattr(func, "__doc__", None) or "").strip():
                bare.append(f"{name}.{attr}")
    assert not bare, f"no docstring: {bare}"
