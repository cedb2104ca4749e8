"""Anthropic Messages on the wire: request rules, message bodies, stream events.

Shapes follow the public API reference (POST /v1/messages, the Message object, streaming
events message_start / content_block_start / content_block_delta / content_block_stop /
message_delta / message_stop, error bodies); the checks are the 400s the real API gives.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from .server import Reply

ID = re.compile(r"^[a-zA-Z0-9_-]+$")
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PARAMS = {
    "model", "max_tokens", "messages", "system", "tools", "tool_choice", "stream",
    "temperature", "top_p", "top_k", "stop_sequences", "metadata", "thinking",
    "service_tier", "container",
}
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


FINAL_NEEDS_THINKING = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
    "We recommend you include thinking blocks from previous turns. To avoid this "
    "requirement, disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
FORCED_WITH_THINKING = "Thinking may not be enabled when tool_choice forces tool use."


def signature(thinking: str) -> str:
    """The signature this fake API gives a thinking text (and checks when it comes back):
    a thinking block changed in any way, or signed for another text, is refused."""
    return "sig_" + hashlib.sha256(thinking.encode()).hexdigest()[:24]


def thinking_enabled(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def check_messages_request(body: Any) -> str | None:
    """The message of the 400 the real API gives for `body`, or None if it is valid."""
    if not isinstance(body, dict):
        return "messages: Input should be a valid dictionary"
    for key in body:
        if key not in PARAMS:
            return f"{key}: Extra inputs are not permitted"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "max_tokens: Field required"
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        return "system: Input should be a valid string"
    if isinstance(system, list):
        for k, b in enumerate(system):
            if not isinstance(b, dict) or b.get("type") != "text" or \
                    set(b) - {"type", "text", "cache_control"}:
                return f"system.{k}: Input should be a text block"
    breakpoints = cache_controls(body)
    if breakpoints > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
    names: list[str] = []
    for i, t in enumerate(body.get("tools") or ()):
        if not isinstance(t.get("name"), str) or not NAME.match(t["name"]):
            return f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        schema = t.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return f"tools.{i}.custom.input_schema.type: Input should be 'object'"
        if set(t) - {"name", "description", "input_schema", "cache_control", "type"}:
            return f"tools.{i}: Extra inputs are not permitted"
        names.append(t["name"])
    choice = body.get("tool_choice")
    thinking = thinking_enabled(body)
    if choice is not None:
        kind = choice.get("type") if isinstance(choice, dict) else None
        if kind not in ("auto", "any", "tool", "none"):
            return "tool_choice: Input tag does not match any of the expected tags"
        if kind == "tool" and choice.get("name") not in names:
            return f"tool_choice.name: Tool '{choice.get('name')}' not found in tools"
        if thinking and kind in ("any", "tool"):
            return FORCED_WITH_THINKING
    if thinking and body["thinking"].get("type") == "enabled":
        budget = body["thinking"].get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal " \
                   "to 1024"
        if budget >= body["max_tokens"]:
            return "`max_tokens` must be greater than `thinking.budget_tokens`. Please " \
                   "consult our documentation at https://docs.claude.com/en/docs/" \
                   "build-with-claude/extended-thinking#max-tokens-and-context-window-size"
    problem = _check_messages(body.get("messages"))
    if problem is None and thinking:
        problem = _check_final_thinking(body["messages"])
    return problem


def cache_controls(body: dict[str, Any]) -> int:
    """How many blocks of `body` (tools, system, messages) carry a cache breakpoint."""
    blocks: list[Any] = list(body.get("tools") or ())
    if isinstance(body.get("system"), list):
        blocks += body["system"]
    for m in body.get("messages") or ():
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            blocks += m["content"]
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)


def _check_final_thinking(messages: list[dict[str, Any]]) -> str | None:
    """With thinking on, a final assistant message that calls tools starts with thinking."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m["role"] != "assistant":
            continue
        blocks = ([{"type": "text", "text": m["content"]}] if isinstance(m["content"], str)
                  else m["content"])
        if any(b.get("type") == "tool_use" for b in blocks) and \
                blocks[0].get("type") not in ("thinking", "redacted_thinking"):
            return FINAL_NEEDS_THINKING.format(i=i, found=blocks[0].get("type"))
        return None
    return None


def _check_messages(messages: Any) -> str | None:
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    seen_ids: set[str] = set()
    previous_uses: list[str] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or set(m) - {"role", "content"}:
            return f"messages.{i}: Extra inputs are not permitted"
        role = m.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if i == 0 and role != "user":
            return "messages: first message must use the \"user\" role"
        if i and messages[i - 1].get("role") == role:
            return "messages: roles must alternate between \"user\" and \"assistant\", but " \
                   f"found multiple \"{role}\" roles in a row"
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or not blocks:
            return f"messages.{i}: all messages must have non-empty content"
        uses: list[str] = []
        results: list[str] = []
        text_seen = False
        for k, b in enumerate(blocks):
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "text":
                if not isinstance(b.get("text"), str) or not b["text"].strip():
                    return f"messages.{i}.content.{k}.text: text content blocks must contain " \
                           "non-whitespace text"
                text_seen = True
            elif kind == "tool_use":
                if role != "assistant":
                    return f"messages.{i}.content.{k}: tool_use blocks are only allowed in " \
                           "assistant messages"
                bid = b.get("id")
                if not isinstance(bid, str) or not ID.match(bid):
                    return f"messages.{i}.content.{k}.tool_use.id: String should match " \
                           "pattern '^[a-zA-Z0-9_-]+$'"
                if bid in seen_ids:
                    return f"messages.{i}.content.{k}: `tool_use` ids must be unique"
                if not isinstance(b.get("name"), str) or not NAME.match(b["name"]):
                    return f"messages.{i}.content.{k}.tool_use.name: String should match " \
                           "pattern '^[a-zA-Z0-9_-]{1,64}$'"
                if not isinstance(b.get("input"), dict):
                    return f"messages.{i}.content.{k}.tool_use.input: Input should be a " \
                           "valid dictionary"
                seen_ids.add(bid)
                uses.append(bid)
            elif kind in ("thinking", "redacted_thinking"):
                if role != "assistant":
                    return f"messages.{i}.content.{k}: {kind} blocks are only allowed in " \
                           "assistant messages"
                if kind == "thinking" and (
                        not isinstance(b.get("thinking"), str)
                        or b.get("signature") != signature(b["thinking"])
                        or set(b) - {"type", "thinking", "signature"}):
                    return f"messages.{i}.content.{k}: Invalid `signature` in `thinking` block"
                if kind == "redacted_thinking" and (
                        not isinstance(b.get("data"), str) or set(b) - {"type", "data"}):
                    return f"messages.{i}.content.{k}.data: Field required"
            elif kind == "tool_result":
                if role != "user":
                    return f"messages.{i}.content.{k}: tool_result blocks are only allowed " \
                           "in user messages"
                if text_seen:
                    return f"messages.{i}: tool_result blocks must come before any text"
                rid = b.get("tool_use_id")
                if rid not in previous_uses:
                    return (f"messages.{i}.content.{k}: unexpected `tool_use_id` found in "
                            "`tool_result` blocks: " + str(rid) + ". Each `tool_result` block "
                            "must have a corresponding `tool_use` block in the previous "
                            "message.")
                if set(b) - {"type", "tool_use_id", "content", "is_error", "cache_control"}:
                    return f"messages.{i}.content.{k}: Extra inputs are not permitted"
                results.append(rid)
            else:
                return f"messages.{i}.content.{k}.type: Input tag '{kind}' does not match " \
                       "any of the expected tags"
        if previous_uses:
            missing = [u for u in previous_uses if u not in results]
            if missing:
                return (f"messages.{i}: `tool_use` ids were found without `tool_result` "
                        f"blocks immediately after: {', '.join(missing)}. Each `tool_use` "
                        "block must have a corresponding `tool_result` block in the next "
                        "message.")
        previous_uses = uses
    if previous_uses:
        return ("`tool_use` ids were found without `tool_result` blocks immediately after: "
                + ", ".join(previous_uses))
    return None


class AnthropicWire:
    """The `Provider` of a fake Anthropic server."""

    def check(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        if path != "/v1/messages":
            return 404, f"Not found: {path}"
        # SDKs authenticate with x-api-key, newer ones with an Authorization bearer token.
        if not headers.get("x-api-key") and \
                not headers.get("authorization", "").startswith("Bearer "):
            return 401, "x-api-key header is required"
        if not headers.get("anthropic-version"):
            return 400, "anthropic-version: header is required"
        problem = check_messages_request(body)
        return (400, problem) if problem else None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error(status, message)

    def encode(self, events: list[dict[str, Any]], request: Any) -> str:
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def error(status: int, message: str, kind: str | None = None) -> dict[str, Any]:
    return {"type": "error",
            "error": {"type": kind or ERROR_TYPES.get(status, "api_error"), "message": message},
            "request_id": "req_test"}


def tool_use(tid: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": arguments}


def thinking(text: str) -> dict[str, Any]:
    """A thinking block, signed as this fake API signs it."""
    return {"type": "thinking", "thinking": text, "signature": signature(text)}


def redacted(data: str) -> dict[str, Any]:
    """A redacted_thinking block (its reasoning encrypted)."""
    return {"type": "redacted_thinking", "data": data}


def message(text: str | None = None, uses: Sequence[dict[str, Any]] = (),
            usage: tuple[int, int] = (20, 7), model: str = "claude-test",
            thoughts: Sequence[dict[str, Any]] = (), stop: str | None = None,
            cache: tuple[int, int] = (0, 0)) -> Reply:
    """A Message object: `thoughts` (thinking blocks) first, then the text, then the tool
    uses; `stop` overrides the stop_reason (`max_tokens`: the output limit cut it);
    `cache`: the tokens read from and written to the prompt cache (counted apart from
    `usage`'s input, as the API does)."""
    content: list[dict[str, Any]] = list(thoughts)
    content += [{"type": "text", "text": text}] if text else []
    content += list(uses)
    return Reply(body={
        "id": "msg_01", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop or ("tool_use" if uses else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1],
                  "cache_creation_input_tokens": cache[1],
                  "cache_read_input_tokens": cache[0]},
    })


def stream(pieces: Sequence[str] = (), uses: Sequence[tuple[str, str, Sequence[str]]] = (),
           usage: tuple[int, int] = (20, 7), model: str = "claude-test",
           thoughts: Sequence[Sequence[str] | dict[str, Any]] = (),
           stop: str | None = None, cache: tuple[int, int] = (0, 0)) -> Reply:
    """The stream of a message: each of `thoughts` first (thinking_delta fragments then
    the signature in two signature_delta events; or a redacted_thinking block, whole), then
    the text `pieces` as text_delta events, then each tool use as (id, name,
    input_json_delta fragments); `stop` overrides the stop_reason."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {
            "id": "msg_02", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": 1,
                      "cache_creation_input_tokens": cache[1],
                      "cache_read_input_tokens": cache[0]}}},
    ]
    index = 0
    for thought in thoughts:
        if isinstance(thought, dict):
            events.append({"type": "content_block_start", "index": index,
                           "content_block": thought})
        else:
            sig = signature("".join(thought))
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "thinking", "thinking": "",
                                             "signature": ""}})
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "thinking_delta", "thinking": t}} for t in thought]
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "signature_delta", "signature": half}}
                       for half in (sig[:10], sig[10:])]
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    if pieces:
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "text", "text": ""}})
        events.append({"type": "ping"})
        events += [{"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": p}} for p in pieces]
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    for tid, name, fragments in uses:
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": tid, "name": name,
                                         "input": {}}})
        events += [{"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": f}}
                   for f in ["", *fragments]]
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": stop or ("tool_use" if uses else "end_turn"),
                             "stop_sequence": None},
                   "usage": {"output_tokens": usage[1]}})
    events.append({"type": "message_stop"})
    return Reply(events=events)


def status(code: int, message: str = "error", headers: dict[str, str] | None = None) -> Reply:
    return Reply(code, error(code, message), headers=headers or {})
