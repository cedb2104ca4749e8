"""What a failed provider call means: SDK exceptions mapped to `ModelError` codes.

Both official SDKs raise the same shapes (`APIStatusError` with `status_code`, `response`
and `body`; `APITimeoutError`; `APIConnectionError`), so one mapping serves both. It reads
attributes, not classes, so it needs neither SDK imported.

| what happened                            | code                      | retried |
| ---------------------------------------- | ------------------------- | ------- |
| 429 (or a rate-limit error event)        | `rate_limited`            | yes (*) |
| 401, 403, no API key                     | `auth_error`              | no      |
| 400/413 saying the context is too long   | `context_length_exceeded` | no      |
| 408, connect timeouts                    | `timeout`                 | yes     |
| a read timeout (the request was sent)    | `timeout`                 | no (***) |
| 5xx: the model's output could not be read | `malformed_output`        | no (**) |
| 409, 5xx, 529 overloaded, connection     | `model_error`             | yes     |
| any other 4xx                            | `model_error`             | no      |

(*) Not when the account's quota is used up: waiting will not help.
(**) The runner gives the model feedback and asks again, without a forced tool choice.
(***) The model may have run it, and the provider billed it: not sent again unless
`RetryPolicy(retry_read_timeouts=True)`.
An error event inside a stream (the SDKs raise it with no status) is classified by its
error object, like the same error outside a stream.
A provider's `x-should-retry` header, when present, overrides the column on the right.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

from ..errors import ModelError

_CONTEXT_MARKERS = (
    "context_length_exceeded", "context length", "context window", "prompt is too long",
    "too many tokens", "maximum context", "input is too long", "reduce the length",
)
_MALFORMED_MARKERS = (
    "model produced output that does not match", "failed to parse tool call",
    "does not match the expected", "failed to parse the model's output",
)
"""What a local server (llama.cpp's `llama-server`, ...) says when it could not parse what
the model generated: the model's fault, answered with feedback, not retried as is."""
# Error types in Anthropic bodies and stream `error` events, as the HTTP status they mean.
_TYPE_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429,
    "api_error": 500, "overloaded_error": 529, "timeout_error": 504,
}


def to_model_error(exc: BaseException, provider: str, resend_after_read_timeout: bool = False
                   ) -> ModelError | None:
    """The `ModelError` an SDK exception stands for, or None if it is not a provider failure
    (a bug in our code or the caller's is left to propagate as it is).
    `resend_after_read_timeout`: whether a read timeout is retryable (see the table)."""
    if isinstance(exc, ModelError):
        return exc
    names = {c.__name__ for c in type(exc).__mro__}
    module = type(exc).__module__.split(".")[0]
    if isinstance(exc, TimeoutError) or "APITimeoutError" in names or (
            module.startswith("httpx") and "TimeoutException" in names):
        if _read_timeout(exc):
            return ModelError(
                f"{provider} sent no answer within the read timeout, after the request was "
                f"sent: {exc}" + ("" if resend_after_read_timeout else
                                  " (not sent again: the model may have run it, and it may "
                                  "be billed; raise the adapter's timeout for slow models)"),
                "timeout", retryable=resend_after_read_timeout)
        return ModelError(f"{provider} did not answer in time: {exc}", "timeout",
                          retryable=True)
    if "APIConnectionError" in names or (module.startswith("httpx") and "TransportError" in names):
        return ModelError(f"Could not reach {provider}: {exc}", "model_error", retryable=True)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return _from_status(exc, provider, status)
    if "APIError" in names and module in ("openai", "anthropic"):
        # An error event inside a stream: the SDK raises APIError with the event's error
        # object as its body and no status. Classified like the same error outside one.
        error = _error_object(getattr(exc, "body", None))
        code, kind = error.get("code"), error.get("type")
        derived = (code if isinstance(code, int) and 400 <= code < 600
                   else _TYPE_STATUS.get(kind, 500) if isinstance(kind, str) else 500)
        return _from_status(exc, provider, derived)
    if module in ("openai", "anthropic") and _mentions_credentials(str(exc)):
        return ModelError(f"{provider} has no credentials: {exc}", "auth_error")
    return None


def _read_timeout(exc: BaseException) -> bool:
    """Whether a timeout struck while waiting for the answer (httpx's `ReadTimeout`, also as
    the cause of the SDK's `APITimeoutError`), rather than while connecting or sending."""
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return False
        if type(seen).__name__ == "ReadTimeout":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _from_status(exc: BaseException, provider: str, status: int) -> ModelError:
    error = _error_object(getattr(exc, "body", None))
    return status_error(provider, status, error, _headers(exc), str(exc))


def status_error(provider: str, status: int, error: Mapping[str, Any],
                 headers: Mapping[str, str], fallback: str) -> ModelError:
    """The `ModelError` for a provider's answer of HTTP `status` (see the table above).

    `error` is the provider's error object (its `type`, `code` and `message`, any of them
    may be missing), `headers` the response's headers with lower-case names, `fallback`
    the text to show when the object has no message. Adapters over SDKs of other shapes
    (google-genai, boto3, litellm) read those three from their own exceptions and call
    this, so every provider's failures get the same codes and retries."""
    kind = error.get("type") if isinstance(error.get("type"), str) else None
    if status < 400 and kind in _TYPE_STATUS:  # an error event inside a 200 stream
        status = _TYPE_STATUS[kind]
    detail = error.get("message") if isinstance(error.get("message"), str) else fallback
    code_field = error.get("code")
    retry_after = retry_after_seconds(headers)
    lowered = f"{detail} {code_field} {kind}".lower()
    where = f"{provider} answered {status}"
    if status == 429:
        quota = code_field == "insufficient_quota" or "quota" in lowered
        err = ModelError(f"{where} (rate limited): {detail}", "rate_limited",
                         retryable=not quota, retry_after=retry_after, status=status)
    elif status in (401, 403):
        err = ModelError(f"{where} (not authorised): {detail}. Check the API key.",
                         "auth_error", status=status)
    elif status == 413 or (status == 400 and any(m in lowered for m in _CONTEXT_MARKERS)):
        err = ModelError(f"{where} (the conversation is too long for the model): {detail}",
                         "context_length_exceeded", status=status)
    elif status == 408:
        err = ModelError(f"{where} (request timeout): {detail}", "timeout", retryable=True,
                         retry_after=retry_after, status=status)
    elif status >= 500 and any(m in lowered for m in _MALFORMED_MARKERS):
        err = ModelError(f"{where}: the model's output could not be read: {detail}",
                         "malformed_output", status=status)
    elif status == 409 or status >= 500:
        err = ModelError(f"{where}: {detail}", "model_error", retryable=True,
                         retry_after=retry_after, status=status)
    else:
        err = ModelError(f"{where}: {detail}", "model_error", status=status)
    should = headers.get("x-should-retry")
    if should == "true":
        err.retryable = True
    elif should == "false":
        err.retryable = False
    return err


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds a provider asked us to wait: `retry-after-ms`, then `retry-after` (seconds
    or an HTTP date). None when it did not say, or said something unreadable."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _headers(exc: BaseException) -> dict[str, str]:
    response = getattr(exc, "response", None)
    raw = getattr(response, "headers", None)
    if raw is None:
        return {}
    try:
        return {str(k).lower(): str(v) for k, v in raw.items()}
    except AttributeError:
        return {}


def _error_object(body: Any) -> dict[str, Any]:
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            return inner
        return body
    return {}


def _mentions_credentials(text: str) -> bool:
    lowered = text.lower()
    return "api_key" in lowered or "api key" in lowered or "authentication" in lowered
