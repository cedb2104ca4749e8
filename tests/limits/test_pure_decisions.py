"""The decisions change nothing (issue 40, item 2): a function of `runtime/decisions`
reads the turn and returns a value; the driver applies it (appends, adds records, emits,
sets the line's counters). This scans the decisions' source: no `emit`, `add_record`,
`append(t, leg, ...)` or `move(...)` is called there, and nothing reached from a `Turn`,
a `Leg` or a `SessionState` argument (or from a name bound to one of them) is assigned,
deleted or changed in place (`.append`, `.add`, `|=`, `[k] = v`, ...)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DECISIONS = Path(__file__).resolve().parents[2] / "src/handoffs/runtime/decisions"

STATE_TYPES = {"Turn", "Leg", "SessionState"}
STATE_NAMES = {"t", "leg", "state", "turn", "lg"}
"""Arguments read as the turn's state when their annotation says so, or by their name."""
CHANGING = {"append", "extend", "add", "update", "pop", "popitem", "clear", "insert",
            "remove", "discard", "setdefault", "sort", "reverse", "add_record", "emit",
            "switch", "handed", "deliver", "release"}
"""Methods that change what they are called on (and the turn's own that do)."""
CHANGING_FUNCTIONS = {"append", "move", "finish"}
"""The state layer's helpers that write the turn (`state.append`, `finish`), and
`handoffs.move`: a decision returns what they would do."""

# Modules not yet converted, each with its count of changes today: a module leaves this
# list when it changes nothing (the test fails if one listed is already clean, so the
# list only shrinks). Empty when item 2 is done.
NOT_YET: dict[str, int] = {
}


def _annotation_names(node: ast.expr | None) -> set[str]:
    if node is None:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


class _Scan(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[str] = []
        self.tracked: list[set[str]] = []

    def _state(self, expr: ast.expr) -> bool:
        root = _root(expr)
        return bool(self.tracked) and root is not None and root in self.tracked[-1]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        tracked = set(self.tracked[-1]) if self.tracked else set()
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if a.arg in STATE_NAMES or _annotation_names(a.annotation) & STATE_TYPES:
                tracked.add(a.arg)
        self.tracked.append(tracked)
        self.generic_visit(node)
        self.tracked.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _target(self, target: ast.expr, node: ast.AST) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for el in target.elts:
                self._target(el, node)
        elif isinstance(target, ast.Attribute | ast.Subscript) and self._state(target):
            self.found.append(f"line {node.lineno}: {ast.unparse(target)} changed")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node)
        if self.tracked and self._state(node.value):  # an alias of the state's parts
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.tracked[-1].add(target.id)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target, node)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target, node)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if self.tracked and self._state(node.value):
            self.tracked[-1].add(node.target.id)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in ("emit", "add_record", "move") or (
                    func.attr in CHANGING and self._state(func.value)):
                self.found.append(f"line {node.lineno}: {ast.unparse(func)}(...) called")
        elif isinstance(func, ast.Name) and func.id in CHANGING_FUNCTIONS and any(
                self._state(a) for a in node.args):
            self.found.append(f"line {node.lineno}: {func.id}(...) called on the turn")
        self.generic_visit(node)


def changes(path: Path) -> list[str]:
    """What a decisions module changes, a line each (empty: it changes nothing)."""
    scan = _Scan()
    scan.visit(ast.parse(path.read_text(), str(path)))
    return scan.found


MODULES = sorted(p for p in DECISIONS.glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_a_decision_changes_nothing_it_reads(path: Path) -> None:
    found = changes(path)
    expected = NOT_YET.get(path.stem)
    if expected is None:
        assert found == [], f"{path.name} changes the turn:\n" + "\n".join(found)
    else:
        assert 0 < len(found) <= expected, (
            f"{path.name}: {len(found)} changes (listed with {expected}); "
            "lower or remove its NOT_YET entry")


def test_the_scan_finds_each_kind_of_change() -> None:
    source = '''
def decide(t: Turn, leg: "Leg", other: int) -> None:
    t.emit("message", {})
    leg.failures += 1
    messages = t.state.messages
    messages.append(1)
    append(t, leg, 1)
    leg.hidden = leg.hidden | {1}
    t.usage_by_model["m"] = 1
    handoffs.move(t, None)
    local = []
    local.append(other)
'''
    scan = _Scan()
    scan.visit(ast.parse(source))
    assert len(scan.found) == 7, scan.found
    assert not any("local" in f for f in scan.found)
