"""A retried request to a real `handoffs serve` is stored once and answered once.

The official `openai` client and raw HTTP against the real server on a real port,
through the ways a client comes to retry (`measure_retries.py` holds the scenarios and
prints the same figures): a proxy's 502, a failed turn's 502, a client timeout, a
response a proxy dropped, the server killed after storing the message.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx

from faults.measure_retries import (
    count,
    dropped_response,
    openai_502,
    openai_failed_turn,
    raw_timeout,
    sigkill,
)
from faults.servers import serve


def test_the_openai_clients_retry_after_a_proxys_502_is_answered_once(
        tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 's.db'}", tmp_path) as server:
        outcome = openai_502(server)
    assert (outcome.stored, outcome.answered) == (1, 1)
    assert outcome.client_got == "answer to slow 0.2 openai"


def test_the_openai_clients_retries_of_a_failed_turn_store_its_message_once(
        tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 's.db'}", tmp_path) as server:
        outcome = openai_failed_turn(server)
    assert (outcome.stored, outcome.client_got) == (1, "error 502")


def test_a_retry_after_a_client_timeout_waits_for_the_first_and_gets_its_answer(
        tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 's.db'}", tmp_path) as server:
        outcome = raw_timeout(server)
    assert (outcome.stored, outcome.answered) == (1, 1)
    assert outcome.client_got == "answer to slow 1.5 timeout"


def test_a_retry_after_a_dropped_response_gets_the_stored_answer(tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 's.db'}", tmp_path) as server:
        outcome = dropped_response(server)
    assert (outcome.stored, outcome.answered) == (1, 1)
    assert outcome.client_got == "answer to slow 0.2 dropped"


def test_a_retry_after_the_server_was_killed_answers_the_stored_message_once(
        tmp_path: Path) -> None:
    outcome = sigkill(f"sqlite:///{tmp_path / 's.db'}", tmp_path)
    assert (outcome.stored, outcome.answered) == (1, 1)
    assert outcome.client_got == "answer to slow 3 killed"


def test_a_key_reused_for_another_message_is_refused_with_409(tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 's.db'}", tmp_path) as server:
        sid, token = server.session()
        key = {"Idempotency-Key": str(uuid.uuid4())}
        assert server.say(sid, token, "first", **key).status_code == 200
        r = server.say(sid, token, "second", **key)
        assert r.status_code == 409
        assert r.json()["error"]["code"] == "idempotency_key_reused"
        assert count(server, sid, "second") == (0, 0)


def test_the_same_messages_sent_anew_by_an_openai_client_are_a_new_turn(
        tmp_path: Path) -> None:
    import openai

    with serve(f"sqlite:///{tmp_path / 's.db'}", tmp_path) as server:
        sid, token = server.session()
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=token,
                               default_headers={"X-Handoffs-Session": sid})
        for _ in range(2):  # not a retry: the user said "yes" twice
            client.chat.completions.create(
                model="team", messages=[{"role": "user", "content": "yes"}])
        assert count(server, sid, "yes") == (2, 2)


def test_a_retry_over_server_sent_events_replays_the_first_turns_events(
        tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 's.db'}", tmp_path) as server:
        sid, token = server.session()
        headers = {"Idempotency-Key": "k", "Accept": "text/event-stream",
                   "Authorization": f"Bearer {token}"}
        url = f"{server.url}/v1/sessions/{sid}/messages"
        bodies = [httpx.post(url, json={"text": "hi"}, headers=headers, timeout=30).text
                  for _ in range(2)]
        assert bodies[0] == bodies[1]
        assert "answer to hi" in bodies[1]
        assert count(server, sid, "hi") == (1, 1)
