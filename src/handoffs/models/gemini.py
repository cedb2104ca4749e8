"""`GeminiModel`: Google's Gemini models through the official `google-genai` SDK, on the
Gemini API or on Vertex AI.

    Runner(team, model="gemini:gemini-2.5-flash")           # GEMINI_API_KEY
    Runner(team, model="gemini:gemini-2.5-flash?vertexai=true&project=my-proj&location=us-central1")

Function declarations with JSON schemas, `system_instruction`, function calling modes,
structured output (`response_json_schema`), streaming, usage with cached and thinking
tokens. Thought signatures (Gemini 3 refuses a function call of the current turn without
its signature) are kept on the transcript (`Reasoning(origin="gemini")`, per call) and
sent back on the same part, only to the same model; a call another provider made gets
the validator-skipping signature Google documents for it.

`pip install 'handoffs[gemini]'`; imported only when a model is created. The SDK's own
retries are off; `RetryPolicy` retries instead.
"""

from __future__ import annotations

import base64
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..core.messages import Message, Reasoning, ToolCall
from ..core.names import tool_name
from ..errors import ModelError
from .base import ModelRequest, ModelResponse, TextDelta, TokenLogprobs, Usage
from .failures import retry_after_seconds, status_error, to_model_error
from .replay import CONTINUE, CallIds, Exchange, arguments_object, own_reasoning, provider_items
from .retry import RetryPolicy
from .sdk import SDKModel, import_sdk
from .tool_choice import resolve_tool_choice

ORIGIN = "gemini"
"""The `Reasoning.origin` of this adapter's parts."""
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The signature Google documents for a function call its model did not make (another
provider's, or one from before signatures were kept): Gemini 3 takes it in place of one."""
_SIGNED = re.compile(r"gemini-(\d+)")
_STOP = {"STOP": "end", "MAX_TOKENS": "length", "SAFETY": "content_filter",
         "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
         "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
         "IMAGE_SAFETY": "content_filter", "LANGUAGE": "content_filter"}
_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE", "tool": "ANY"}


class GeminiModel(SDKModel):
    """A `Model` on Gemini (`client.aio.models.generate_content` and its stream)."""

    provider = "gemini"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        vertexai: bool | None = None,
        project: str | None = None,
        location: str | None = None,
        client: Any = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        """`model` is Google's model name (`gemini-2.5-flash`, `gemini-3-pro-preview`).

        `api_key`: None reads GEMINI_API_KEY, then GOOGLE_API_KEY. `vertexai`: True for
        Vertex AI (None reads GOOGLE_GENAI_USE_VERTEXAI), with `project` and `location`
        (None: GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION) and Google Cloud's default
        credentials, or an API key for Vertex AI express mode. `base_url`: another
        endpoint (a proxy, a test server). `client`: a `google.genai.Client` to use as it
        is. `timeout`: seconds for a whole call. `max_retries`, `retry`: see
        `RetryPolicy`. `settings`: `GenerateContentConfig` fields sent every time
        (`temperature`, `max_output_tokens`, `thinking_config`, ...); a request's own
        settings override them.
        """
        self._genai = import_sdk("google.genai", "Gemini", "gemini", "google-genai")
        self._api_key = (api_key or os.environ.get("GEMINI_API_KEY")
                         or os.environ.get("GOOGLE_API_KEY"))
        self.base_url = base_url
        self.vertexai = (os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower()
                         in ("1", "true") if vertexai is None else vertexai)
        """Whether requests go to Vertex AI rather than the Gemini API."""
        self.project = project or os.environ.get("GOOGLE_CLOUD_PROJECT")
        self.location = location or os.environ.get("GOOGLE_CLOUD_LOCATION")
        found = _SIGNED.match(model.rsplit("/", 1)[-1])
        self._needs_signatures = found is not None and int(found.group(1)) >= 3
        super().__init__(model, client=client, timeout=timeout, max_retries=max_retries,
                         retry=retry, settings=settings, make_client=self._make_client)

    def __repr__(self) -> str:
        return f"GeminiModel({self.model!r}{', vertexai=True' if self.vertexai else ''})"

    def _make_client(self) -> Any:
        types = self._genai.types
        options = types.HttpOptions(base_url=self.base_url, timeout=int(self.timeout * 1000),
                                    retry_options=types.HttpRetryOptions(attempts=1))
        if self.vertexai:
            if self._api_key and not self.project:  # Vertex AI express mode
                return self._genai.Client(vertexai=True, api_key=self._api_key,
                                          http_options=options)
            return self._genai.Client(vertexai=True, project=self.project,
                                      location=self.location, http_options=options)
        return self._genai.Client(api_key=self._api_key, http_options=options)

    def _check_credentials(self) -> None:
        if not self.vertexai and not self._api_key:
            raise ModelError("No Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) or "
                             "pass GeminiModel(api_key=...).", "auth_error")

    def _classify(self, exc: BaseException) -> ModelError | None:
        return gemini_error(exc) or to_model_error(exc, self.provider)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """`generate_content`'s arguments for `request`: model, contents, config."""
        config: dict[str, Any] = {}
        if request.system:
            config["system_instruction"] = request.system
        if request.tools:
            config["tools"] = [{"function_declarations": [
                {"name": t.name, "description": t.description,
                 "parameters_json_schema": t.parameters} for t in request.tools]}]
        choice = resolve_tool_choice(request.tool_choice, request.tools)
        if choice is not None:
            kind, name = choice
            calling: dict[str, Any] = {"mode": _MODES[kind]}
            if name is not None:
                calling["allowed_function_names"] = [name]
            config["tool_config"] = {"function_calling_config": calling}
        output = request.output
        if output is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = output.schema
        if request.logprobs:
            config["response_logprobs"] = True
            config["logprobs"] = request.logprobs
        config.update(self.settings)
        config.update(request.settings)
        return {"model": self.model, "contents": gemini_contents(
            request.messages, self.model, self._needs_signatures), "config": config}

    def _stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        return body  # streaming is another method, not a field

    async def _create(self, body: dict[str, Any]) -> Any:
        return await self._client().aio.models.generate_content(**body)

    def _response(self, raw: Any) -> ModelResponse:
        parts = _Collected(self.model)
        parts.add(raw)
        return parts.response()

    async def _stream_once(self, body: dict[str, Any]
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        stream = await self._client().aio.models.generate_content_stream(**body)
        parts = _Collected(self.model)
        try:
            async for chunk in stream:
                for text in parts.add(chunk):
                    yield TextDelta(text)
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        yield parts.response()


class _Collected:
    """A response's parts gathered from one answer or from a stream's chunks."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []
        self.reasoning: list[Reasoning] = []
        self.usage: Any = None
        self.finish: str | None = None
        self.blocked: str | None = None
        self.answered_by: str | None = None
        self.tokens: list[TokenLogprobs] = []

    def add(self, raw: Any) -> list[str]:
        """Take in one response (or chunk); the text it adds, piece by piece."""
        added: list[str] = []
        self.usage = getattr(raw, "usage_metadata", None) or self.usage
        self.answered_by = getattr(raw, "model_version", None) or self.answered_by
        blocked = getattr(getattr(raw, "prompt_feedback", None), "block_reason", None)
        if blocked:
            self.blocked = str(blocked)
        candidates = getattr(raw, "candidates", None) or ()
        if not candidates:
            return added
        candidate = candidates[0]
        reason = getattr(candidate, "finish_reason", None)
        if reason is not None:
            self.finish = getattr(reason, "value", None) or str(reason)
        said = getattr(candidate, "logprobs_result", None)
        if said is not None:  # asked with `response_logprobs`
            tops = getattr(said, "top_candidates", None) or ()
            for i, chosen in enumerate(getattr(said, "chosen_candidates", None) or ()):
                top = getattr(tops[i], "candidates", None) or () if i < len(tops) else ()
                self.tokens.append(TokenLogprobs(chosen.token or "", chosen.log_probability or 0.0,
                                                 tuple((c.token or "", c.log_probability or 0.0)
                                                       for c in top)))
        content = getattr(candidate, "content", None)
        for part in getattr(content, "parts", None) or ():
            signature = getattr(part, "thought_signature", None)
            call = getattr(part, "function_call", None)
            if call is not None:
                cid = call.id or f"call_{uuid.uuid4().hex[:24]}"
                self.calls.append(ToolCall(cid, call.name or "", json.dumps(call.args or {})))
                if signature:
                    self._keep(signature, cid)
                continue
            if signature and not any(r.call_id is None for r in self.reasoning):
                self._keep(signature, None)
            if getattr(part, "thought", None):
                continue  # a thought summary: not part of the answer
            text = getattr(part, "text", None)
            if text:
                self.texts.append(text)
                added.append(text)
        return added

    def _keep(self, signature: bytes, call_id: str | None) -> None:
        # URL-safe base64, as the SDK itself writes bytes on the wire
        data = {"thought_signature": base64.urlsafe_b64encode(signature).decode("ascii")}
        self.reasoning.append(Reasoning(ORIGIN, "thought_signature", data,
                                        model=self.model, call_id=call_id))

    def response(self) -> ModelResponse:
        if self.finish in ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"):
            raise ModelError(f"gemini could not read the function call its model wrote "
                             f"({self.finish}).", "malformed_output")
        stop = ("content_filter" if self.blocked else "tool_calls" if self.calls
                else _STOP.get(self.finish or "STOP", "end"))
        return ModelResponse("".join(self.texts), tuple(self.calls), _usage(self.usage),
                             self.answered_by or self.model, tuple(self.reasoning), stop,
                             tuple(self.tokens))


def gemini_contents(messages: Sequence[Message], model: str, sign: bool = False
                    ) -> list[dict[str, Any]]:
    """A neutral view as Gemini contents: `user` and `model` turns alternating, each
    model turn with function calls followed by a user turn with one function response
    per call, in order; the model's thought signatures back on the parts they came on
    (`sign`: a call without one gets `SKIP_SIGNATURE`, as Gemini 3 requires)."""
    out: list[dict[str, Any]] = []
    ids = CallIds()

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})

    for item in provider_items(messages):
        if not isinstance(item, Exchange):
            add("user", [{"text": item.text}])
            continue
        signatures = {r.call_id: r.data["thought_signature"]
                      for r in own_reasoning(item.reasoning, ORIGIN, model)
                      if r.kind == "thought_signature"}
        parts: list[dict[str, Any]] = []
        if item.text.strip():
            parts.append(_signed({"text": item.text}, signatures.get(None)))
        rendered = [ids(c.id) for c in item.calls]
        for n, (rid, c) in enumerate(zip(rendered, item.calls, strict=True)):
            signature = signatures.get(c.id) or (SKIP_SIGNATURE if sign and n == 0 else None)
            parts.append(_signed({"function_call": {
                "id": rid, "name": tool_name(c.name), "args": arguments_object(c.arguments)}},
                signature))
        if not parts:
            continue
        add("model", parts)
        if item.calls:
            add("user", [{"function_response": {
                "id": rid, "name": tool_name(c.name),
                "response": {"error" if r.is_error else "output": r.text or "(empty)"}}}
                for rid, c, r in zip(rendered, item.calls, item.results, strict=True)])
    if not out or out[0]["role"] != "user":
        out.insert(0, {"role": "user", "parts": [{"text": CONTINUE}]})
    if out[-1]["role"] != "user":
        out.append({"role": "user", "parts": [{"text": CONTINUE}]})
    return out


def _signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
    """`part` with `signature` (base64 text) as the bytes the SDK sends back as base64.
    The skip marker is itself URL-safe base64, so it reaches the wire as it is written."""
    if signature is not None:
        part["thought_signature"] = base64.urlsafe_b64decode(
            signature.replace("+", "-").replace("/", "_"))
    return part


def gemini_error(exc: BaseException) -> ModelError | None:
    """The `ModelError` of a google-genai `APIError` (its `code`, `status`, `message`) or
    of an aiohttp connection failure (the SDK's transport when aiohttp is installed)."""
    module = type(exc).__module__
    names = {c.__name__ for c in type(exc).__mro__}
    if module.startswith("aiohttp") and "ClientError" in names and not isinstance(
            exc, TimeoutError):
        return ModelError(f"Could not reach gemini: {exc}", "model_error", retryable=True)
    code = getattr(exc, "code", None)
    if not module.startswith("google.genai") or not isinstance(code, int):
        return None
    message = str(getattr(exc, "message", None) or exc)
    headers = _headers(getattr(exc, "response", None))
    if code == 429:
        # RESOURCE_EXHAUSTED is a per-minute limit as often as a quota: it is retried,
        # after the delay Google says (RetryInfo), within RetryPolicy.max_retry_after.
        wait = retry_after_seconds(headers)
        if wait is None:
            wait = _retry_delay(getattr(exc, "details", None))
        return ModelError(f"gemini answered 429 (rate limited): {message}", "rate_limited",
                          retryable=True, retry_after=wait, status=429)
    if code == 400 and "exceeds the maximum number of tokens" in message:
        return ModelError(f"gemini answered 400 (the conversation is too long for the "
                          f"model): {message}", "context_length_exceeded", status=400)
    error = {"message": message, "code": getattr(exc, "status", None)}
    return status_error("gemini", code, error, headers, message)


def _headers(response: Any) -> dict[str, str]:
    raw = getattr(response, "headers", None)
    try:
        return {str(k).lower(): str(v) for k, v in raw.items()} if raw is not None else {}
    except AttributeError:
        return {}


def _retry_delay(details: Any) -> float | None:
    """The `retryDelay` ("12s") of a google.rpc.RetryInfo in an error body, if any."""
    error = details.get("error", details) if isinstance(details, dict) else None
    for detail in (error or {}).get("details") or ():
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return float(delay[:-1])
            except ValueError:
                return None
    return None


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage(0, 0, 1)

    def count(name: str) -> int:
        return int(getattr(raw, name, 0) or 0)

    thoughts = count("thoughts_token_count")
    return Usage(count("prompt_token_count") + count("tool_use_prompt_token_count"),
                 count("candidates_token_count") + thoughts, 1,
                 cache_read_tokens=count("cached_content_token_count"),
                 reasoning_tokens=thoughts)


def gemini_model(name: str, **options: Any) -> GeminiModel:
    """`get_model("gemini:<name>")`."""
    return GeminiModel(name, **options)
