"""What LiteLLM talks to in the wire tests: Chat Completions servers (OpenAIWire), and
one of DeepSeek's thinking mode, whose assistant messages carry `reasoning_content`.

DeepSeek's rule (its docs, "Thinking Mode", tool calls): within a turn, an assistant
message with tool calls must come back with the `reasoning_content` it was answered
with; otherwise the request is refused. This server also refuses reasoning it never gave
out (another model's).
"""

from __future__ import annotations

import copy
from typing import Any

from .openai_api import OpenAIWire, completion
from .server import Reply


class ThinkingChatWire(OpenAIWire):
    """A Chat Completions server in DeepSeek's thinking mode."""

    def __init__(self) -> None:
        self.issued: set[str] = set()

    def check(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        if isinstance(body, dict) and isinstance(body.get("messages"), list):
            messages = body["messages"]
            start = max((i for i, m in enumerate(messages) if m.get("role") == "user"),
                        default=0)
            for i, m in enumerate(messages):
                if m.get("role") != "assistant":
                    continue
                thought = m.get("reasoning_content")
                if thought is not None and thought not in self.issued:
                    return 400, f"messages[{i}].reasoning_content was not made by this model."
                if i > start and m.get("tool_calls") and thought is None:
                    return 400, ("Missing `reasoning_content` field in the assistant message "
                                 f"at message index {i}. In thinking mode, the "
                                 "reasoning_content must be passed back to the API.")
            body = copy.deepcopy(body)
            for m in body["messages"]:
                m.pop("reasoning_content", None)
        return super().check(path, headers, body)

    def answered(self, reply: Reply) -> None:
        for choice in (reply.body or {}).get("choices") or ():
            thought = choice["message"].get("reasoning_content")
            if thought:
                self.issued.add(thought)
        for event in reply.events or ():
            for choice in event.get("choices") or ():
                thought = (choice.get("delta") or {}).get("reasoning_content")
                if thought:
                    self.issued.add(thought)


def thinking_completion(thought: str, text: str | None = None,
                        calls: list[dict[str, Any]] | None = None,
                        usage: tuple[int, int] = (12, 5)) -> Reply:
    """A chat.completion whose message carries `reasoning_content`, with the reasoning
    tokens counted in `completion_tokens_details`."""
    reply = completion(text, calls, usage, model="deepseek-reasoner")
    reply.body["choices"][0]["message"]["reasoning_content"] = thought
    reply.body["usage"]["completion_tokens_details"] = {"reasoning_tokens": 3}
    reply.body["usage"]["prompt_tokens_details"] = {"cached_tokens": 8}
    return reply
