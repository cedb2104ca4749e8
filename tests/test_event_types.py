"""Every event type the runtime makes is one the library names: in `EVENT_TYPES`, in the
table of `handoffs.core.events` (the docs' events page is generated from it), and with a
`TypedDict` of `handoffs.core.event_data` whose fields are the table's."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any, get_args

from handoffs.core import event_data
from handoffs.core.events import EVENT_TYPES

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "handoffs"


def _hook() -> Any:
    spec = importlib.util.spec_from_file_location(
        "generated", ROOT / "docs" / "_hooks" / "generated.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _made_types() -> dict[str, list[str]]:
    """Each event type made in src (the first argument of an `emit(...)` call, or of an
    `Event(...)` built by hand), with where; an `emit` whose type is not a string
    constant is listed as `<not a constant>`."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in ("emit", "Event"):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                kind = first.value
            elif name == "emit":
                kind = "<not a constant>"  # mypy could not check its fields
            else:
                continue  # an event made again of its parts (an `EventLog`, a codec)
            found.setdefault(kind, []).append(f"{path.relative_to(SRC)}:{node.lineno}")
    return found


def _fields(cell: str) -> list[str]:
    """The field names of a table cell: "agent, text (a note), code?" -> agent, text,
    code? (notes dropped)."""
    return [part.split(" ", 1)[0] for part in _hook()._split_fields(cell)]


def test_every_event_type_made_in_src_is_a_named_type_with_a_row_in_the_docs() -> None:
    made = _made_types()
    assert "<not a constant>" not in made, made.get("<not a constant>")
    assert len(made) > 25  # the scan finds the runtime's events
    documented = {kind for kind, _ in _hook().event_rows()}
    assert set(made) - set(EVENT_TYPES) == set(), {
        k: v for k, v in made.items() if k not in EVENT_TYPES}
    assert set(made) - documented == set()
    # and no type is named that nothing makes
    assert set(EVENT_TYPES) - set(made) == set()


def test_every_event_type_has_a_typed_dict_and_a_literal() -> None:
    assert tuple(get_args(event_data.EventType)) == EVENT_TYPES
    assert tuple(event_data.FIELDS) == EVENT_TYPES


def test_each_typed_dict_has_the_fields_of_its_row_in_the_table() -> None:
    for kind, cell in _hook().event_rows():
        names = _fields(cell)
        if kind in ("run_completed", "run_failed"):
            names.remove("result")  # `Event.result`, not a field of `data`
        required = {n for n in names if not n.endswith("?")}
        optional = {n[:-1] for n in names if n.endswith("?")}
        cls = event_data.FIELDS[kind]
        assert (set(cls.__required_keys__), set(cls.__optional_keys__)) == (  # type: ignore[attr-defined]
            required, optional), kind
