"""The prompt-cache benchmark (bench/traffic/cache.py): it plays the traffic scenario through
our runner and finds the stable layout's prefix extending from call to call, where the old
layout (the note at the end of the system text) changed the system text at each handoff."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "traffic"))

import cache

pytest.importorskip("openai")


def test_the_stable_layout_never_changes_an_agents_system_text_and_caches_more() -> None:
    stable = [(r["agent"], r["body"]) for r in cache.record(cache.ROOT / "src")]
    before = [(agent, cache.note_in_system(body)) for agent, body in stable]
    new, old = cache.measure(stable), cache.measure(before)

    assert new.requests == old.requests == 11
    assert new.system_changes == 0 and old.system_changes == 3
    assert new.cached > old.cached
    assert new.cost(new.cached) < old.cost(old.cached)
    assert "| note in the history (stable prefix) | 11 |" in cache.table(
        {"note in the history (stable prefix)": new})


def test_the_old_layout_keeps_the_note_in_the_system_text_until_the_target_answers() -> None:
    system = {"role": "system", "content": "You are billing."}
    note = {"role": "user", "content": "# Handoff\ntriage handed the conversation to you."
                                       + cache.TAKING_OVER}
    user = {"role": "user", "content": "charged twice"}
    answered = {"role": "assistant", "content": "Refunded."}

    taking_over = cache.note_in_system({"messages": [system, user, note]})
    later = cache.note_in_system({"messages": [system, user, note, answered, user]})
    assert taking_over["messages"][0]["content"].endswith(cache.TAKING_OVER)
    assert [m["role"] for m in taking_over["messages"]] == ["system", "user"]
    assert later["messages"][0]["content"] == "You are billing."


def test_prefixes_and_openai_rules() -> None:
    assert cache.common(b"abcdef", b"abcxyz") == 3 and cache.common(b"", b"a") == 0
    assert cache.openai_hit(5_000, 1_000) == 0  # under 1,024 tokens: no hit
    assert cache.openai_hit(5_000, 1_300) == 1_280  # 128-token steps
