"""OpenAI Chat Completions on the wire: request rules, response bodies, stream chunks.

Shapes follow the public API reference (chat.completions create, the chat completion
object, the chat completion chunk object); the checks are the 400s the real API gives for
histories that frameworks commonly get wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from .server import Reply, sse_data

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PARAMS = {
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions",
    "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata",
    "modalities", "n", "parallel_tool_calls", "prediction", "presence_penalty",
    "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature",
    "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
    "web_search_options",
}
MESSAGE_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "refusal", "audio"},
    "tool": {"role", "content", "tool_call_id"},
}


REASONING_MODEL = re.compile(r"^(?:o[1-9]|gpt-5)(?:\b|[-.])")
"""OpenAI's reasoning model families, which refuse `max_tokens`."""
CALL_KEYS = {"id", "type", "function"}


def check_chat_request(body: Any, message_keys: dict[str, set[str]] = MESSAGE_KEYS,
                       call_keys: set[str] = CALL_KEYS) -> str | None:
    """The message of the 400 the real API gives for `body`, or None if it is valid
    (`message_keys`, `call_keys`: the fields a compatible server takes on messages and on
    an assistant's tool calls)."""
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request."
    for key in body:
        if key not in PARAMS:
            return f"Unrecognized request argument supplied: {key}"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    if "max_tokens" in body and REASONING_MODEL.match(body["model"]):
        return ("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                "'max_completion_tokens' instead.")
    if "top_logprobs" in body and body.get("logprobs") is not True:
        return "logprobs must be set to true if top_logprobs is used."
    if not 0 <= body.get("top_logprobs", 0) <= 20:
        return "Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20."
    if "stream_options" in body and body.get("stream") is not True:
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    tools = body.get("tools")
    names: list[str] = []
    if tools is not None:
        if not isinstance(tools, list) or not tools:
            return "Invalid 'tools': empty array. Expected an array with minimum length 1."
        for i, t in enumerate(tools):
            fn = t.get("function") if isinstance(t, dict) else None
            if t.get("type") != "function" or not isinstance(fn, dict):
                return f"Invalid value for 'tools[{i}].type'."
            if not isinstance(fn.get("name"), str) or not NAME.match(fn["name"]):
                return f"Invalid 'tools[{i}].function.name': string does not match pattern."
            if len(fn.get("description") or "") > 1024:
                return (f"Invalid 'tools[{i}].function.description': string too long. "
                        "Expected a string with maximum length 1024.")
            params = fn.get("parameters")
            if params is not None and (not isinstance(params, dict)
                                       or params.get("type") != "object"):
                return f"Invalid schema for function '{fn['name']}': schema must be an object."
            if fn.get("strict") is True and _not_strict(params):
                return (f"Invalid schema for function '{fn['name']}': In context=(), "
                        f"{_not_strict(params)}")
            names.append(fn["name"])
    fmt = body.get("response_format")
    if fmt is not None:
        spec = fmt.get("json_schema") if isinstance(fmt, dict) else None
        if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object",
                                                                 "json_schema"):
            return "Invalid value for 'response_format.type'."
        if fmt["type"] == "json_schema":
            if not isinstance(spec, dict) or not NAME.match(str(spec.get("name", ""))):
                return "Invalid 'response_format.json_schema.name': string does not match " \
                       "pattern."
            if spec.get("strict") is True and _not_strict(spec.get("schema")):
                return (f"Invalid schema for response_format '{spec['name']}': In "
                        f"context=(), {_not_strict(spec.get('schema'))}")
    choice = body.get("tool_choice")
    if choice is not None:
        if tools is None:
            return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when " \
                   "'tools' are specified."
        if isinstance(choice, str):
            if choice not in ("none", "auto", "required"):
                return f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', " \
                       "and 'required'."
        elif not (isinstance(choice, dict) and choice.get("type") == "function"
                  and isinstance(choice.get("function"), dict)
                  and choice["function"].get("name") in names):
            return "Invalid 'tool_choice': the named function is not among the tools."
    return _check_messages(body.get("messages"), message_keys, call_keys)


def _not_strict(schema: Any) -> str | None:
    """Why strict mode refuses `schema` (objects closed, every property required)."""
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
    for sub in schema.get("$defs", {}).values():
        why = _not_strict(sub)
        if why:
            return why
    return None


def _check_messages(messages: Any, message_keys: dict[str, set[str]],
                    call_keys: set[str]) -> str | None:
    if not isinstance(messages, list) or not messages:
        return "Invalid 'messages': empty array. Expected an array with minimum length 1."
    waiting: list[str] = []  # ids of the latest assistant's calls not answered yet
    answerable = False
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in message_keys:
            return f"Invalid value for 'messages[{i}].role'."
        extra = set(m) - message_keys[role]
        if extra:
            return f"Unrecognized argument 'messages[{i}].{sorted(extra)[0]}'."
        if role == "tool":
            cid = m.get("tool_call_id")
            if not answerable or cid not in waiting:
                return ("Invalid parameter: messages with role 'tool' must be a response to "
                        "a preceeding message with 'tool_calls'.")
            if not isinstance(m.get("content"), str | list):
                return f"Invalid type for 'messages[{i}].content'."
            waiting.remove(cid)
            continue
        if waiting:
            return ("An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not "
                    f"have response messages: {', '.join(waiting)}")
        answerable = False
        content = m.get("content")
        if role == "assistant":
            calls = m.get("tool_calls")
            if content is None and not calls:
                return f"Invalid 'messages[{i}]': assistant content or tool_calls required."
            if calls is not None:
                if not isinstance(calls, list) or not calls:
                    return f"Invalid 'messages[{i}].tool_calls': empty array."
                for k, c in enumerate(calls):
                    if set(c) - call_keys:
                        return (f"Unrecognized argument 'messages[{i}].tool_calls[{k}]."
                                f"{sorted(set(c) - call_keys)[0]}'.")
                    cid = c.get("id")
                    if not isinstance(cid, str) or not cid:
                        return f"Missing required parameter: 'messages[{i}].tool_calls[{k}].id'."
                    if len(cid) > 40:
                        return (f"Invalid 'messages[{i}].tool_calls[{k}].id': string too long. "
                                "Expected a string with maximum length 40, but got a string "
                                f"with length {len(cid)} instead.")
                    fn = c.get("function")
                    if c.get("type") != "function" or not isinstance(fn, dict) or \
                            not isinstance(fn.get("name"), str) or \
                            not isinstance(fn.get("arguments"), str):
                        return f"Invalid 'messages[{i}].tool_calls[{k}]'."
                    waiting.append(cid)
                answerable = True
        elif not isinstance(content, str | list):
            return f"Invalid type for 'messages[{i}].content': expected a string."
    if waiting:
        return ("An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}")
    return None


class OpenAIWire:
    """The `Provider` of a fake OpenAI-compatible server (OpenAI's own rules; subclasses
    say where another server differs)."""

    path = "/v1/chat/completions"
    message_keys = MESSAGE_KEYS
    call_keys = CALL_KEYS

    def check(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        if path != self.path:
            return 404, f"Invalid URL (POST {path})"
        if not self.authorised(headers):
            return 401, "You didn't provide an API key."
        problem = check_chat_request(body, self.message_keys, self.call_keys)
        if problem is None:
            problem = self.rules(body)
        return (400, problem) if problem else None

    def authorised(self, headers: dict[str, str]) -> bool:
        return headers.get("authorization", "").startswith("Bearer ")

    def rules(self, body: dict[str, Any]) -> str | None:
        """A compatible server's own rules beyond OpenAI's (None: none broken)."""
        return None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(
            status, "invalid_request_error" if status < 500 else "server_error")
        return error(message, kind)

    def encode(self, events: list[dict[str, Any]], request: Any) -> str:
        usage_wanted = bool((request.get("stream_options") or {}).get("include_usage"))
        kept = [e for e in events if e.get("choices") or usage_wanted]
        return sse_data(kept) + "data: [DONE]\n\n"


def error(message: str, kind: str = "invalid_request_error", code: str | None = None
          ) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def tool_call(cid: str, name: str, arguments: Any, signature: str | None = None
              ) -> dict[str, Any]:
    """A tool call; `signature`: Gemini's thought signature on it (`extra_content`)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
    if signature is not None:
        call["extra_content"] = {"google": {"thought_signature": signature}}
    return call


def completion(text: str | None = None, calls: list[dict[str, Any]] | None = None,
               usage: tuple[int, int] = (12, 5), model: str = "gpt-test",
               finish: str | None = None, reasoning: str | None = None,
               details: tuple[int, int] | None = None,
               logprobs: Sequence[Token] | None = None) -> Reply:
    """A chat.completion object with one choice; `finish` overrides its finish_reason
    (`length`: the output limit cut it), `reasoning` is a `reasoning_content`; `details`:
    (cached prompt tokens, reasoning tokens), counted within `usage` as the API does;
    `logprobs`: the answer's tokens, each (token, logprob, [(alternative, logprob), ...]),
    as the API sends them when asked (`logprobs`, `top_logprobs`)."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None,
                               "annotations": []}
    if calls:
        message["tool_calls"] = calls
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return Reply(body={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
        "model": model, "system_fingerprint": None, "service_tier": "default",
        "choices": [{"index": 0, "message": message,
                     "logprobs": None if logprobs is None else {
                         "content": [token_logprob(*t) for t in logprobs], "refusal": None},
                     "finish_reason": finish or ("tool_calls" if calls else "stop")}],
        "usage": _usage(usage, details),
    })


Token = tuple[str, float, Sequence[tuple[str, float]]]
"""A token of an answer, its log probability and the likeliest at its position."""


def token_logprob(token: str, logprob: float, top: Sequence[tuple[str, float]]
                  ) -> dict[str, Any]:
    """A token's entry in `logprobs.content` (Chat Completions) or an output text's
    `logprobs` (Responses): the same shape in both."""
    def entry(t: str, lp: float) -> dict[str, Any]:
        return {"token": t, "logprob": lp, "bytes": list(t.encode())}
    return {**entry(token, logprob), "top_logprobs": [entry(t, lp) for t, lp in top]}


def _usage(usage: tuple[int, int], details: tuple[int, int] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                            "total_tokens": usage[0] + usage[1]}
    if details is not None:
        body["prompt_tokens_details"] = {"cached_tokens": details[0], "audio_tokens": 0}
        body["completion_tokens_details"] = {"reasoning_tokens": details[1],
                                             "audio_tokens": 0}
    return body


def _chunk(delta: dict[str, Any], finish: str | None = None,
           model: str = "gpt-test") -> dict[str, Any]:
    return {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": model, "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None,
                         "finish_reason": finish}]}


def stream(pieces: Sequence[str] = (), calls: Sequence[tuple[str, str, Sequence[str]]] = (),
           usage: tuple[int, int] = (12, 5), model: str = "gpt-test",
           finish: str | None = None, reasoning: Sequence[str] = (),
           signatures: Sequence[str | None] = (),
           details: tuple[int, int] | None = None) -> Reply:
    """chat.completion.chunk events: the `reasoning` pieces (`reasoning_content` deltas),
    the text in `pieces`, then each call as (id, name, argument fragments), the first chunk
    of a call carrying its id, name and its one of `signatures` (Gemini's, in
    `extra_content`); then the finish chunk (`finish` overrides its reason) and (when the
    request asked) the usage chunk."""
    events = [_chunk({"role": "assistant", "content": "", "refusal": None}, model=model)]
    events += [_chunk({"reasoning_content": r}, model=model) for r in reasoning]
    events += [_chunk({"content": p}, model=model) for p in pieces]
    for index, (cid, name, fragments) in enumerate(calls):
        first: dict[str, Any] = {"index": index, "id": cid, "type": "function",
                                 "function": {"name": name, "arguments": ""}}
        if index < len(signatures) and signatures[index] is not None:
            first["extra_content"] = {"google": {"thought_signature": signatures[index]}}
        events.append(_chunk({"tool_calls": [first]}, model=model))
        events += [_chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]},
                          model=model) for f in fragments]
    events.append(_chunk({}, finish or ("tool_calls" if calls else "stop"), model=model))
    events.append({"id": "chatcmpl-2", "object": "chat.completion.chunk",
                   "created": 1_700_000_000, "model": model, "choices": [],
                   "usage": _usage(usage, details)})
    return Reply(events=events)


def status(code: int, message: str = "error", headers: dict[str, str] | None = None,
           kind: str | None = None, err_code: str | None = None) -> Reply:
    return Reply(code, error(message, kind or ("server_error" if code >= 500 else
                                               "invalid_request_error"), err_code),
                 headers=headers or {})
