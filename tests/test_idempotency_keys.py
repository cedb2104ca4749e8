"""How long a session remembers idempotency keys, and which keys it takes."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffsError, Runner, Team
from handoffs.core.idempotency import (
    FIELD,
    KEY_TTL,
    MAX_KEYS,
    IdempotencyKey,
    fingerprint,
    remember,
    seen,
)
from handoffs.core.session import SessionState
from handoffs.testing import ScriptedModel, reply


def test_a_key_is_forgotten_after_its_lifetime() -> None:
    state = SessionState("s")
    key = IdempotencyKey("k")
    remember(state, key, fingerprint("message", "hi"), now=1000.0)

    assert seen(state, key, fingerprint("message", "hi"), 1000.0 + KEY_TTL - 1) is not None
    assert seen(state, key, fingerprint("message", "hi"), 1000.0 + KEY_TTL + 1) is None


def test_a_session_keeps_only_its_newest_keys() -> None:
    state = SessionState("s")
    for i in range(MAX_KEYS + 50):
        remember(state, IdempotencyKey(f"k{i}"), "p", now=float(i))

    kept = state.metadata[FIELD]
    assert len(kept) == MAX_KEYS
    assert "k0" not in kept and f"k{MAX_KEYS + 49}" in kept


def test_a_fresh_key_is_recorded_but_never_answers_from_an_earlier_request() -> None:
    state = SessionState("s")
    remember(state, IdempotencyKey("k"), "p", now=0.0)
    assert seen(state, IdempotencyKey("k", fresh=True), "p", 1.0) is None


@pytest.mark.parametrize("key", ["", "x" * 256])
async def test_an_empty_or_overlong_key_is_refused_before_anything_is_stored(
        key: str) -> None:
    runner = Runner(Team([Agent("triage")]), model=ScriptedModel([reply("ok")]))
    with pytest.raises(HandoffsError) as caught:
        await runner.run("s", "hi", idempotency_key=key)
    assert caught.value.code == "invalid_argument"
    assert await runner.get_session("s") is None
