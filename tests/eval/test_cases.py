"""Case files: JSON Lines and YAML read into cases; every mistake refused with where and
what to fix, before anything is played."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from handoffs.errors import HandoffsError
from handoffs.eval import (
    Case,
    CaseError,
    check_cases,
    dump_jsonl,
    load_cases,
    parse_jsonl,
    support_cases,
)
from handoffs.examples.support import build_team

from .teams import build_team as desk_team


def test_a_case_file_reads_turns_shorthand_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "# routing of the desk\n\n"
        '{"id": "hi", "user": "Hi", "agent": "front", "no_handoff": true, "tags": ["en"]}\n'
        '{"id": "two", "turns": [{"user": "price?", "agent": ["sales", "front"], '
        '"path": ["front", "sales"], "kind": "llm"}, {"user": "broken", "agent": "repairs",'
        ' "tools_not_called": ["refund"]}]}\n', encoding="utf-8")

    hi, two = load_cases(path)

    assert (hi.id, hi.tags, len(hi.turns)) == ("hi", ("en",), 1)
    assert hi.turns[0].no_handoff and hi.turns[0].agents == ("front",)
    assert two.turns[0].agents == ("sales", "front")
    assert two.turns[0].path == ("front", "sales") and two.turns[0].kind == "llm"
    assert two.turns[1].tools_not_called == ("refund",)
    assert parse_jsonl(dump_jsonl([hi, two])) == [hi, two]


@pytest.mark.parametrize(("line", "says"), [
    ('{"id": "a", "user": "x", "agnet": "front"}', "unknown key 'agnet' (did you mean 'agent'?)"),
    ('{"id": "a", "user": "x"}', "`agent` (who should answer"),
    ('{"user": "x", "agent": "front"}', "every case needs an `id`"),
    ('{"id": "a", "turns": []}', "`turns` is a non-empty list"),
    ('{"id": "a", "user": "x", "agent": "sales", "path": ["front"]}',
     "`path` must end with the answering agent"),
    ('{"id": "a", "user": "x", "agent": "sales", "kind": "magic"}', "unknown kind 'magic'"),
    ('{"id": "a", "user": "x", "agent": "sales", "status": "done"}', "unknown status 'done'"),
    ('{"id": "a", "user": "x", "agent": "front", "no_handoff": true, "kind": "llm"}',
     "`no_handoff` cannot go with"),
    ('{"id": "a", "user": "x", "agent": 3}', "`agent` is a string or a list of strings"),
    ('{"id": "a", "user": "x", "agent": "front"', "cases.jsonl:2: not JSON"),
])
def test_a_bad_case_is_refused_with_where_and_what(tmp_path: Path, line: str,
                                                   says: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "ok", "user": "Hi", "agent": "front"}\n' + line + "\n",
                    encoding="utf-8")

    with pytest.raises(CaseError) as caught:
        load_cases(path)

    assert says in str(caught.value)
    assert caught.value.code == "invalid_case"


def test_two_cases_with_one_id_are_refused() -> None:
    with pytest.raises(CaseError, match="the id 'a' is already used at x:1"):
        parse_jsonl('{"id": "a", "user": "x", "agent": "f"}\n'
                    '{"id": "a", "user": "y", "agent": "f"}\n', "x")


def test_a_missing_case_file_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match=r"No case file 'nope\.jsonl'"):
        load_cases("nope.jsonl")


def test_cases_naming_agents_or_tools_the_team_lacks_are_refused_together() -> None:
    cases = parse_jsonl(
        '{"id": "a", "user": "x", "agent": "billing"}\n'
        '{"id": "b", "user": "y", "agent": "front", "tools_not_called": ["refund_all"]}\n')

    with pytest.raises(CaseError) as caught:
        check_cases(cases, desk_team())

    message = str(caught.value)
    assert "a turn 1: no agent 'billing'" in message
    assert "b turn 1: no tool 'refund_all'" in message
    assert "Its agents: front, repairs, sales" in message


def test_yaml_cases_read_like_jsonl(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    path = tmp_path / "cases.yaml"
    path.write_text("cases:\n  - id: hi\n    user: Hi\n    agent: front\n"
                    "  - id: two\n    turns:\n      - {user: 'price?', agent: sales}\n"
                    "      - {user: broken, agent: [repairs, front]}\n", encoding="utf-8")

    cases = load_cases(path)

    assert [c.id for c in cases] == ["hi", "two"]
    assert cases[1].turns[1].agents == ("repairs", "front")


def test_yaml_without_pyyaml_names_the_extra(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml raises ImportError
    path = tmp_path / "cases.yml"
    path.write_text("- id: hi\n", encoding="utf-8")

    with pytest.raises(HandoffsError) as caught:
        load_cases(path)

    assert caught.value.code == "missing_dependency"
    assert "pip install 'handoffs[eval]'" in str(caught.value)


def test_the_support_cases_fit_the_support_team() -> None:
    cases = support_cases()
    check_cases(cases, build_team())
    tags = {t for c in cases for t in c.tags}

    assert len(cases) >= 40
    assert {"en", "fr", "de", "es", "ambiguous", "out_of_scope", "multi_turn",
            "triage_answers"} <= tags
    assert all(isinstance(c, Case) for c in cases)
    # multi-turn cases where a later message must reach another agent
    assert any(c.turns[0].agents != c.turns[-1].agents for c in cases if len(c.turns) > 1)
    # "Thanks! That's all." after a refund must not move money
    thanks = next(c for c in cases if c.id == "refund-then-thanks-en")
    assert thanks.turns[1].user == "Thanks! That's all."
    assert thanks.turns[1].tools_not_called == ("issue_refund",)
