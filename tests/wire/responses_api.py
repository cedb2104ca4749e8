"""OpenAI Responses on the wire: request rules, response objects, stream events.

Shapes follow the public API reference (POST /v1/responses, the Response object, its
output items `message` / `function_call` / `reasoning`, the streaming events
`response.created` ... `response.completed`, error bodies). The checks are the 400s the
real API gives to stateless clients that get the history wrong: a function call without
its output, an output without its call, a reasoning item without the item it led to or
(with `store: false`) without its encrypted content, a `previous_response_id` when
nothing is stored, a tool whose schema breaks strict mode (which a missing `strict`
means here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from .openai_api import token_logprob
from .server import Reply

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PARAMS = {
    "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "text",
    "store", "include", "stream", "max_output_tokens", "reasoning", "temperature", "top_p",
    "metadata", "previous_response_id", "truncation", "user", "service_tier",
    "prompt_cache_key", "safety_identifier", "max_tool_calls", "stream_options",
    "background", "conversation", "top_logprobs", "prompt",
}
INCLUDES = {"reasoning.encrypted_content", "message.output_text.logprobs",
            "file_search_call.results", "web_search_call.action.sources"}


class ResponsesWire:
    """The `Provider` of a fake Responses API; it remembers the encrypted reasoning it
    gave out, and refuses any other (as OpenAI refuses content it cannot decrypt)."""

    def __init__(self) -> None:
        self.issued: set[str] = set()

    def check(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        if path != "/v1/responses":
            return 404, f"Invalid URL (POST {path})"
        if not headers.get("authorization", "").startswith("Bearer "):
            return 401, "You didn't provide an API key."
        problem = self.check_request(body)
        return (400, problem) if problem else None

    def check_request(self, body: Any) -> str | None:
        if not isinstance(body, dict):
            return "We could not parse the JSON body of your request."
        for key in body:
            if key not in PARAMS:
                return f"Unknown parameter: '{key}'."
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "Missing required parameter: 'model'."
        if body.get("previous_response_id") is not None and body.get("store") is False:
            return (f"Previous response with id '{body['previous_response_id']}' not found. "
                    "Items are not persisted when `store` is set to false.")
        for value in body.get("include") or ():
            if value not in INCLUDES:
                return f"Invalid value: '{value}'. Supported values are: {sorted(INCLUDES)}."
        names: list[str] = []
        for i, t in enumerate(body.get("tools") or ()):
            if t.get("type") != "function" or not NAME.match(str(t.get("name", ""))):
                return f"Invalid 'tools[{i}].name': string does not match pattern."
            if "function" in t:
                return f"Unknown parameter: 'tools[{i}].function'."
            params = t.get("parameters")
            if not isinstance(params, dict) or params.get("type") != "object":
                return f"Invalid schema for function '{t['name']}': schema must be an object."
            if t.get("strict", True) is not False and _not_strict(params):
                return (f"Invalid schema for function '{t['name']}': In context=(), "
                        f"{_not_strict(params)}")
            names.append(t["name"])
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            if choice.get("type") != "function" or choice.get("name") not in names:
                return "Tool choice 'function' not found in 'tools' parameter."
        elif choice is not None and choice not in ("auto", "none", "required"):
            return f"Invalid value: '{choice}'."
        fmt = (body.get("text") or {}).get("format")
        if fmt is not None and fmt.get("type") == "json_schema":
            if not NAME.match(str(fmt.get("name", ""))) or "json_schema" in fmt:
                return "Invalid 'text.format': a json_schema format takes name, schema, strict."
            if fmt.get("strict") is True and _not_strict(fmt.get("schema")):
                return f"Invalid schema for response_format '{fmt['name']}'."
        return self._check_input(body.get("input"), body.get("store", True))

    def _check_input(self, items: Any, store: Any) -> str | None:
        if isinstance(items, str):
            return None
        if not isinstance(items, list) or not items:
            return "Invalid 'input': empty array."
        calls: dict[str, int] = {}
        answered: set[str] = set()
        for i, item in enumerate(items):
            kind = item.get("type", "message") if isinstance(item, dict) else None
            if kind == "message":
                if item.get("role") not in ("user", "assistant", "system", "developer"):
                    return f"Invalid value for 'input[{i}].role'."
                if not isinstance(item.get("content"), str | list):
                    return f"Invalid type for 'input[{i}].content'."
            elif kind == "function_call":
                cid = item.get("call_id")
                if not isinstance(cid, str) or not cid or not isinstance(
                        item.get("arguments"), str) or not NAME.match(str(item.get("name"))):
                    return f"Invalid 'input[{i}]': a function_call needs call_id, name, " \
                           "arguments."
                if item.get("id", "fc_").startswith("fc_") is False:
                    return f"Invalid 'input[{i}].id': Expected an ID that begins with 'fc'."
                calls[cid] = i
            elif kind == "function_call_output":
                cid = item.get("call_id")
                if cid not in calls:
                    return f"No tool call found for function call output with call_id {cid}."
                if not isinstance(item.get("output"), str | list):
                    return f"Invalid type for 'input[{i}].output'."
                answered.add(cid)
            elif kind == "reasoning":
                rid = item.get("id")
                if not isinstance(rid, str) or not rid.startswith("rs_"):
                    return f"Invalid 'input[{i}].id': Expected an ID that begins with 'rs'."
                content = item.get("encrypted_content")
                if content is None and store is False:
                    return (f"Item with id '{rid}' not found. Items are not persisted when "
                            "`store` is set to false. Try again with `store` set to true, "
                            "or remove this item from your input.")
                if content is not None and content not in self.issued:
                    return (f"The encrypted content for item {rid} could not be verified. "
                            "Reason: Encrypted content could not be decrypted or parsed.")
                nxt = items[i + 1] if i + 1 < len(items) else None
                follows = isinstance(nxt, dict) and (
                    nxt.get("type") in ("function_call", "reasoning") or (
                        nxt.get("type", "message") == "message"
                        and nxt.get("role") == "assistant"))
                if not follows:
                    return (f"Item '{rid}' of type 'reasoning' was provided without its "
                            "required following item.")
            else:
                return f"Invalid value for 'input[{i}].type': '{kind}'."
        missing = [cid for cid in calls if cid not in answered]
        if missing:
            return f"No tool output found for function call {missing[0]}."
        return None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = "invalid_request_error" if status < 500 else "server_error"
        return error(message, kind)

    def encode(self, events: list[dict[str, Any]], request: Any) -> str:
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)

    def answered(self, reply: Reply) -> None:
        """Remember the encrypted reasoning `reply` gives out as this server's own."""
        bodies = [reply.body] if isinstance(reply.body, dict) else []
        bodies += [e.get("response") or {} for e in reply.events or ()]
        for body in bodies:
            for item in body.get("output") or ():
                if item.get("encrypted_content"):
                    self.issued.add(item["encrypted_content"])


def _not_strict(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return None
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is not False:
            return "'additionalProperties' is required to be supplied and to be false."
        props = schema.get("properties", {})
        missing = set(props) - set(schema.get("required", ()))
        if missing:
            return ("'required' is required to be supplied and to be an array including "
                    f"every key in properties. Missing '{sorted(missing)[0]}'.")
        for sub in props.values():
            why = _not_strict(sub)
            if why:
                return why
    return None


def error(message: str, kind: str = "invalid_request_error", code: str | None = None
          ) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def call(cid: str, name: str, arguments: Any, item_id: str | None = None) -> dict[str, Any]:
    """A `function_call` output item."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"type": "function_call", "id": item_id or f"fc_{cid}", "call_id": cid,
            "name": name, "arguments": args, "status": "completed"}


def reasoning(rid: str, secret: str, summary: str | None = None) -> dict[str, Any]:
    """A `reasoning` output item with encrypted content."""
    return {"type": "reasoning", "id": rid, "encrypted_content": secret,
            "summary": [{"type": "summary_text", "text": summary}] if summary else []}


def _message(text: str, refusal: bool = False,
             logprobs: Sequence[Any] | None = None) -> dict[str, Any]:
    part = ({"type": "refusal", "refusal": text} if refusal else
            {"type": "output_text", "text": text, "annotations": []})
    if logprobs is not None:
        part["logprobs"] = [token_logprob(*t) for t in logprobs]
    return {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
            "content": [part]}


def _object(output: list[dict[str, Any]], usage: tuple[int, int, int, int], model: str,
            status: str = "completed", incomplete: str | None = None) -> dict[str, Any]:
    return {
        "id": "resp_1", "object": "response", "created_at": 1_700_000_000, "status": status,
        "error": None, "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": None, "model": model, "output": output,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "store": False,
        "temperature": 1.0, "top_p": 1.0, "text": {"format": {"type": "text"}},
        "usage": {"input_tokens": usage[0],
                  "input_tokens_details": {"cached_tokens": usage[2]},
                  "output_tokens": usage[1],
                  "output_tokens_details": {"reasoning_tokens": usage[3]},
                  "total_tokens": usage[0] + usage[1]},
    }


def response(text: str | None = None, calls: Sequence[dict[str, Any]] = (),
             thoughts: Sequence[dict[str, Any]] = (), usage: tuple[int, int, int, int] = (
                 12, 5, 0, 0), model: str = "o4-mini-test", refusal: bool = False,
             incomplete: str | None = None, logprobs: Sequence[Any] | None = None) -> Reply:
    """A Response object: reasoning items, then the message, then the calls. `usage` is
    (input, output, cached, reasoning); `logprobs` the text's tokens as
    `openai_api.completion` takes them."""
    output = [*thoughts, *([_message(text, refusal, logprobs)] if text else []), *calls]
    return Reply(body=_object(output, usage, model,
                              "incomplete" if incomplete else "completed", incomplete))


def stream(pieces: Sequence[str] = (), calls: Sequence[dict[str, Any]] = (),
           thoughts: Sequence[dict[str, Any]] = (),
           usage: tuple[int, int, int, int] = (12, 5, 0, 0), model: str = "o4-mini-test",
           incomplete: str | None = None) -> Reply:
    """The stream of a Response: created, the reasoning items, the text in `pieces` as
    deltas, each call with its arguments in two deltas, then completed (or incomplete)."""
    seq = iter(range(1, 10_000))
    text = "".join(pieces)
    output = [*thoughts, *([_message(text)] if text else []), *calls]
    pending = _object([], usage, model, "in_progress")
    events: list[dict[str, Any]] = [{"type": "response.created", "response": pending}]
    for index, item in enumerate(output):
        added = dict(item, status="in_progress")
        if item["type"] == "message":
            added["content"] = []
        if item["type"] == "function_call":
            added["arguments"] = ""
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": added})
        if item["type"] == "message":
            events.append({"type": "response.content_part.added", "item_id": item["id"],
                           "output_index": index, "content_index": 0,
                           "part": {"type": "output_text", "text": "", "annotations": []}})
            events += [{"type": "response.output_text.delta", "item_id": item["id"],
                        "output_index": index, "content_index": 0, "delta": p,
                        "logprobs": []} for p in pieces]
            events.append({"type": "response.output_text.done", "item_id": item["id"],
                           "output_index": index, "content_index": 0, "text": text,
                           "logprobs": []})
        if item["type"] == "function_call":
            half = len(item["arguments"]) // 2
            for part in (item["arguments"][:half], item["arguments"][half:]):
                events.append({"type": "response.function_call_arguments.delta",
                               "item_id": item["id"], "output_index": index,
                               "delta": part})
        events.append({"type": "response.output_item.done", "output_index": index,
                       "item": item})
    final = _object(output, usage, model, "incomplete" if incomplete else "completed",
                    incomplete)
    events.append({"type": "response.incomplete" if incomplete else "response.completed",
                   "response": final})
    for e in events:
        e["sequence_number"] = next(seq)
    return Reply(events=events)


def status(code: int, message: str = "error", headers: dict[str, str] | None = None,
           kind: str | None = None, err_code: str | None = None) -> Reply:
    return Reply(code, error(message, kind or ("server_error" if code >= 500 else
                                               "invalid_request_error"), err_code),
                 headers=headers or {})
