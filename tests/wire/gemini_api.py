"""The Gemini API (generativelanguage, v1beta) on the wire: request rules, responses,
stream chunks, error bodies.

Shapes follow the public REST reference (models.generateContent and
models.streamGenerateContent with `alt=sse`, Content / Part / FunctionCall /
FunctionResponse, GenerateContentResponse with usageMetadata, google.rpc error bodies).
The checks are the 400s the real API gives: function call turns out of place, a
function response count that does not match the calls, and, for Gemini 3 models, a
function call of the current turn without its thought signature; a signature this
server never gave out is refused as invalid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .server import Reply, sse_data

PATH = re.compile(r"^/v1(?:beta1?)?/(?:projects/[^/]+/locations/[^/]+/)?(?:publishers/google/)?"
                  r"models/([^/:]+):(generateContent|streamGenerateContent)(\?alt=sse)?$")
"""The Gemini API's path (`/v1beta/models/...`) and Vertex AI's (`/v1beta1/publishers/google/
models/...`, with `projects/<p>/locations/<l>/` before it outside express mode)."""
NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
BODY = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig",
        "safetySettings", "cachedContent", "labels"}
DATA = {"text", "functionCall", "functionResponse", "inlineData", "fileData",
        "executableCode", "codeExecutionResult"}
SKIP = "skip_thought_signature_validator"
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
          404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
          503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w.title() for w in rest)


def _keys(d: Any) -> Any:
    """`d` with its own keys in lowerCamelCase (not those of the values inside)."""
    return {_camel(k): v for k, v in d.items()} if isinstance(d, dict) else d


def canon(body: dict[str, Any]) -> dict[str, Any]:
    """A request as proto JSON reads it: field names in lowerCamelCase or as in the proto
    (snake_case) are the same field; here all become lowerCamelCase (the SDK sends some
    of each). Schemas, call arguments and responses are the caller's data, kept as sent."""
    out = _keys(body)
    if "contents" in out:
        out["contents"] = [dict(_keys(c), parts=[_part(p) for p in c.get("parts") or ()])
                           for c in out["contents"]]
    if "systemInstruction" in out:
        out["systemInstruction"] = dict(_keys(out["systemInstruction"]))
    if "tools" in out:
        out["tools"] = [dict(_keys(t), functionDeclarations=[
            _keys(f) for f in _keys(t).get("functionDeclarations") or ()]) for t in out["tools"]]
    if "toolConfig" in out:
        config = _keys(out["toolConfig"])
        if "functionCallingConfig" in config:
            config["functionCallingConfig"] = _keys(config["functionCallingConfig"])
        out["toolConfig"] = config
    if "generationConfig" in out:
        out["generationConfig"] = _keys(out["generationConfig"])
    return out


def _part(p: Any) -> Any:
    part = _keys(p)
    for key in ("functionCall", "functionResponse"):
        if key in part:
            part[key] = _keys(part[key])
    return part


class GeminiWire:
    """The `Provider` of a fake Gemini API; it remembers the thought signatures it gave."""

    def __init__(self) -> None:
        self.issued: set[str] = set()

    def check(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        found = PATH.match(path)
        if found is None or (found.group(2) == "streamGenerateContent") != bool(
                found.group(3)):
            return 404, f"Invalid URL (POST {path})"
        if not headers.get("x-goog-api-key"):
            return 403, ("Method doesn't allow unregistered callers (callers without "
                         "established identity). Please use API Key or other form of API "
                         "consumer identity to call this API.")
        if not isinstance(body, dict):
            return 400, "Invalid JSON payload received."
        problem = self.check_request(found.group(1), canon(body))
        return (400, problem) if problem else None

    def check_request(self, model: str, body: dict[str, Any]) -> str | None:
        for key in body:
            if key not in BODY:
                return f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
        names: list[str] = []
        for tool in body.get("tools") or ():
            for f in tool.get("functionDeclarations") or ():
                if not NAME.match(str(f.get("name", ""))):
                    return ("* GenerateContentRequest.tools[0].function_declarations[0].name:"
                            " Invalid function name.")
                if "parameters" in f and "parametersJsonSchema" in f:
                    return "parameters and parameters_json_schema are mutually exclusive."
                schema = f.get("parametersJsonSchema")
                if schema is not None and schema.get("type") != "object":
                    return "parameters_json_schema must describe an object."
                names.append(f["name"])
        calling = (body.get("toolConfig") or {}).get("functionCallingConfig")
        if calling is not None:
            if calling.get("mode") not in ("AUTO", "ANY", "NONE", "VALIDATED"):
                return "Invalid value at 'tool_config.function_calling_config.mode'."
            allowed = calling.get("allowedFunctionNames")
            if allowed is not None and (calling["mode"] != "ANY"
                                        or set(allowed) - set(names)):
                return ("* GenerateContentRequest.tool_config.function_calling_config."
                        "allowed_function_names: only allowed in mode ANY, among the "
                        "declared functions.")
        config = body.get("generationConfig") or {}
        if "responseJsonSchema" in config and config.get(
                "responseMimeType") != "application/json":
            return "response_json_schema requires response_mime_type application/json."
        if "logprobs" in config and config.get("responseLogprobs") is not True:
            return "logprobs is only allowed when response_logprobs is true."
        if not 0 <= config.get("logprobs", 0) <= 20:
            return "logprobs must be in [0, 20]."
        return self._check_contents(model, body.get("contents"))

    def _check_contents(self, model: str, contents: Any) -> str | None:
        if not isinstance(contents, list) or not contents:
            return "* GenerateContentRequest.contents: contents is not specified"
        turn_start = 0
        for i, c in enumerate(contents):
            if c.get("role") == "user" and any("text" in p for p in c.get("parts") or ()):
                turn_start = i
        previous: dict[str, Any] | None = None
        for i, c in enumerate(contents):
            role, parts = c.get("role"), c.get("parts")
            if role not in ("user", "model"):
                return f"Please use a valid role: user, model. (contents[{i}])"
            if not isinstance(parts, list) or not parts:
                return f"* GenerateContentRequest.contents[{i}].parts: contents.parts must " \
                       "not be empty."
            for k, p in enumerate(parts):
                data = [key for key in p if key in DATA]
                if len(data) != 1:
                    return f"contents[{i}].parts[{k}]: a part holds exactly one kind of data."
                signature = p.get("thoughtSignature")
                if signature is not None and signature != SKIP and signature not in \
                        self.issued:
                    return "Thought signature is not valid."
                response = p.get("functionResponse")
                if response is not None and not isinstance(response.get("response"), dict):
                    return f"contents[{i}].parts[{k}].function_response.response must be " \
                           "an object."
            calls = [p for p in parts if "functionCall" in p]
            answers = [p for p in parts if "functionResponse" in p]
            if calls:
                before = previous is not None and previous["role"] == "user"
                if role != "model" or not before:
                    return ("Please ensure that function call turn comes immediately after a "
                            "user turn or after a function response turn.")
                if (model.startswith("gemini-3") and i > turn_start
                        and "thoughtSignature" not in calls[0]):
                    return ("Function call is missing a thought_signature in functionCall "
                            "parts. This is required for tools to work correctly, and "
                            "missing thought_signature may lead to degraded model "
                            "performance. Additional data, function call `default_api:"
                            f"{calls[0]['functionCall'].get('name')}` , position {i + 1}.")
                after = contents[i + 1] if i + 1 < len(contents) else None
                got = [p for p in (after or {}).get("parts") or () if "functionResponse" in p]
                if after is None or after.get("role") != "user" or len(got) != len(calls):
                    return ("Please ensure that the number of function response parts is "
                            "equal to the number of function call parts of the function call "
                            "turn.")
                for call, answer in zip(calls, got, strict=True):
                    if call["functionCall"].get("name") != answer["functionResponse"].get(
                            "name"):
                        return "function response name does not match the function call."
            if answers and (previous is None or not any(
                    "functionCall" in p for p in previous.get("parts") or ())):
                return ("Please ensure that function response turn comes immediately after a "
                        "function call turn.")
            previous = c
        return None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return error(status, message)

    def encode(self, events: list[dict[str, Any]], request: Any) -> str:
        return sse_data(events).replace("\n\n", "\r\n\r\n")

    def answered(self, reply: Reply) -> None:
        """Remember the thought signatures `reply` gives out as this server's own."""
        for body in ([reply.body] if isinstance(reply.body, dict) else []) + list(
                reply.events or ()):
            for candidate in body.get("candidates") or ():
                for part in (candidate.get("content") or {}).get("parts") or ():
                    if part.get("thoughtSignature"):
                        self.issued.add(part["thoughtSignature"])


def error(status: int, message: str, details: list[dict[str, Any]] | None = None
          ) -> dict[str, Any]:
    body: dict[str, Any] = {"code": status, "message": message,
                            "status": STATUS.get(status, "UNKNOWN")}
    if details:
        body["details"] = details
    return {"error": body}


def call(name: str, args: dict[str, Any], cid: str | None = None,
         signature: str | None = None) -> dict[str, Any]:
    """A functionCall part (Gemini 3 gives ids; 2.x may not)."""
    fc: dict[str, Any] = {"name": name, "args": args}
    if cid:
        fc["id"] = cid
    part: dict[str, Any] = {"functionCall": fc}
    if signature:
        part["thoughtSignature"] = signature
    return part


def _usage(usage: tuple[int, int, int, int]) -> dict[str, Any]:
    prompt, out, cached, thoughts = usage
    body = {"promptTokenCount": prompt, "candidatesTokenCount": out,
            "totalTokenCount": prompt + out + thoughts}
    if cached:
        body["cachedContentTokenCount"] = cached
    if thoughts:
        body["thoughtsTokenCount"] = thoughts
    return body


def response(text: str | None = None, calls: Sequence[dict[str, Any]] = (),
             usage: tuple[int, int, int, int] = (12, 5, 0, 0), finish: str = "STOP",
             text_signature: str | None = None, model: str = "gemini-test",
             logprobs: Sequence[Any] | None = None) -> Reply:
    """A GenerateContentResponse with one candidate. `usage`: (prompt, candidates,
    cached, thoughts); `logprobs`: the text's tokens, each (token, logprob,
    [(alternative, logprob), ...]), as `logprobsResult` sends them."""
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"text": text} | ({"thoughtSignature": text_signature}
                                       if text_signature else {}))
    parts.extend(calls)
    return Reply(body={
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish,
                        "index": 0} | ({} if logprobs is None else {"logprobsResult": {
                            "chosenCandidates": [{"token": t, "logProbability": lp}
                                                 for t, lp, _ in logprobs],
                            "topCandidates": [{"candidates": [
                                {"token": a, "logProbability": alp} for a, alp in top]}
                                for _, _, top in logprobs]}})],
        "usageMetadata": _usage(usage), "modelVersion": model, "responseId": "r-1"})


def stream(pieces: Sequence[str] = (), calls: Sequence[dict[str, Any]] = (),
           usage: tuple[int, int, int, int] = (12, 5, 0, 0), finish: str = "STOP",
           model: str = "gemini-test") -> Reply:
    """streamGenerateContent chunks: one per text piece, then the calls, the last chunk
    with the finish reason and the usage."""
    def chunk(parts: list[dict[str, Any]], last: bool = False) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts},
                                     "index": 0}
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": model,
                                "responseId": "r-2"}
        if last:
            candidate["finishReason"] = finish
            body["usageMetadata"] = _usage(usage)
        return body

    events = [chunk([{"text": p}]) for p in pieces]
    events.append(chunk(list(calls) or [{"text": ""}], last=True))
    return Reply(events=events)


def status(code: int, message: str = "error", headers: dict[str, str] | None = None,
           details: list[dict[str, Any]] | None = None) -> Reply:
    return Reply(code, error(code, message, details), headers=headers or {})
