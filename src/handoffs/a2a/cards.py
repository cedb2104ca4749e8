"""A remote agent's card: read once, when a `RemoteAgent` is built without a description,
with a plain HTTP GET (the team is built outside any event loop's turn), then checked by
the a2a-sdk's own parser."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import HandoffsError, missing_extra

CARD_PATH = "/.well-known/agent-card.json"
"""Where an A2A agent publishes its card, under its base URL."""


def sdk() -> None:
    """Check the a2a-sdk is installed (`missing_dependency` otherwise)."""
    try:
        import a2a.types  # noqa: F401
    except ImportError as exc:
        raise missing_extra("RemoteAgent and `serve --a2a` need the a2a-sdk", "a2a") from exc


def fetch_card(url: str, headers: Mapping[str, str], timeout: float,
               agent: str) -> dict[str, Any]:
    """The card at `url` as JSON data, checked by the SDK's parser; `remote_unreachable`
    when it cannot be read, `remote_rejected` when it is not an agent card."""
    sdk()
    import httpx
    from a2a.client.card_resolver import parse_agent_card

    where = url.rstrip("/") + CARD_PATH
    try:
        response = httpx.get(where, headers=dict(headers), timeout=timeout)
        response.raise_for_status()
        data = response.json()
    except httpx.HTTPError as exc:
        raise HandoffsError(
            f"The card of remote agent {agent!r} could not be read from {where}: {exc}. "
            "Check the URL and that the agent is up, or give RemoteAgent(description=...) "
            "to build the team without it.", code="remote_unreachable") from exc
    except ValueError as exc:
        raise HandoffsError(f"{where} is not JSON: {exc}.", code="remote_rejected") from exc
    try:
        parse_agent_card(dict(data))
    except Exception as exc:
        raise HandoffsError(f"{where} is not an A2A agent card: {exc}.",
                            code="remote_rejected") from exc
    return dict(data)
