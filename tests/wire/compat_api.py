"""Servers that speak Chat Completions with rules of their own: DeepSeek's thinking mode,
Gemini's OpenAI-compatible endpoint, Azure OpenAI; and a hosted service's name pointed at
a local fake server, so the official client talks to `https://<host>`'s stand-in at
`http://<host>:<port>` without any network.
"""

from __future__ import annotations

import socket
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest

from .openai_api import CALL_KEYS, MESSAGE_KEYS, OpenAIWire


class DeepSeekWire(OpenAIWire):
    """DeepSeek (https://api.deepseek.com) in thinking mode: an assistant message with tool
    calls must come back with its `reasoning_content` (its docs, "Thinking Mode")."""

    path = "/chat/completions"
    message_keys: ClassVar[dict[str, set[str]]] = {
        **MESSAGE_KEYS, "assistant": MESSAGE_KEYS["assistant"] | {"reasoning_content"}}

    def rules(self, body: dict[str, Any]) -> str | None:
        for m in body["messages"]:
            if m["role"] == "assistant" and m.get("tool_calls") and \
                    not m.get("reasoning_content"):
                return "The reasoning_content in the thinking mode must be passed back to " \
                       "the API."
        return None


class GeminiCompatWire(OpenAIWire):
    """Gemini's OpenAI-compatible endpoint (…/v1beta/openai/): in the current turn (since
    the last user message), the first tool call of each assistant step must come back with
    its thought signature, `extra_content.google.thought_signature` (Gemini 3)."""

    path = "/v1beta/openai/chat/completions"
    call_keys = CALL_KEYS | {"extra_content"}

    def rules(self, body: dict[str, Any]) -> str | None:
        messages = body["messages"]
        start = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=0)
        for m in messages[start:]:
            calls = m.get("tool_calls") if m["role"] == "assistant" else None
            if not calls:
                continue
            signed = (calls[0].get("extra_content") or {}).get("google", {})
            if not isinstance(signed.get("thought_signature"), str):
                return ("Function call is missing a thought_signature in functionCall parts. "
                        "This is required for tools to work correctly, and missing "
                        "thought_signature may lead to degraded model performance. Additional "
                        f"data, function call `default_api:{calls[0]['function']['name']}` , "
                        "position 2. please refer to https://ai.google.dev/gemini-api/docs/"
                        "thought-signatures for more details.")
        return None


class AzureWire(OpenAIWire):
    """Azure OpenAI: the v1 API (`/openai/v1/chat/completions`) and the dated one
    (`/openai/deployments/<deployment>/chat/completions?api-version=...`), an `api-key`
    header or an Entra ID bearer token."""

    def __init__(self, key: str = "azure-key", token: str = "entra-token") -> None:
        self.key = key
        self.token = token
        self.seen: list[tuple[str, str | None, str]] = []
        """Each accepted request's (deployment or "v1", api-version, how it signed in)."""

    def check(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        url = urlsplit(path)
        query = parse_qs(url.query)
        version = query.get("api-version", [None])[0]
        parts = url.path.strip("/").split("/")
        if url.path == "/openai/v1/chat/completions":
            where = "v1"
        elif (len(parts) == 5 and parts[:2] == ["openai", "deployments"]
              and parts[3:] == ["chat", "completions"]):
            if version is None:
                return 404, "Resource not found"  # Azure's answer without api-version
            where = parts[2]
        else:
            return 404, "Resource not found"
        if headers.get("api-key") == self.key:
            how = "api-key"
        elif headers.get("authorization") == f"Bearer {self.token}":
            how = "entra"
        elif headers.get("authorization") == f"Bearer {self.key}" and where == "v1":
            how = "api-key"
        else:
            return 401, "Access denied due to invalid subscription key or wrong API endpoint."
        from .openai_api import check_chat_request

        problem = check_chat_request(body)
        if problem:
            return 400, problem
        self.seen.append((where, version, how))
        return None


def hosted(monkeypatch: pytest.MonkeyPatch, host: str, url: str) -> str:
    """`http://<host>:<port>` of the fake server at `url`, with `host` resolving to it in
    this process (the client connects there; the adapter sees a hosted service's name)."""
    port = urlsplit(url).port
    real = socket.getaddrinfo

    def resolve(name: Any, *args: Any, **kwargs: Any) -> Any:
        named = name.decode() if isinstance(name, bytes) else name
        return real("127.0.0.1" if named == host else name, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return f"http://{host}:{port}"
