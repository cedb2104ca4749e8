"""Every error as JSON `{"error": {"code", "message"}}`, with a 4xx status that fits.

The library's stable codes pass through unchanged; the status comes from the code.
Nothing a client sends can produce a 500 or a traceback: an unexpected exception is
logged here and answered `internal_error` with a sentence, never its text.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import HandoffsError

log = logging.getLogger("handoffs.server")

STATUS: dict[str, int] = {
    "invalid_argument": 400, "invalid_request": 400, "invalid_json": 400,
    "unauthorized": 401,
    "forbidden": 403, "not_user_selectable": 403, "system_only": 403,
    "not_found": 404, "session_not_found": 404, "unknown_target": 404,
    "unknown_model": 404,
    "method_not_allowed": 405,
    "session_exists": 409, "session_busy": 409, "session_conflict": 409,
    "not_waiting_for_human": 409, "no_pending_approval": 409,
    "waiting_for_approval": 409, "target_disabled": 409, "channel_unsupported": 409,
    "not_declared": 409, "self_handoff": 409, "missing_capability": 409,
    "loop_detected": 409, "too_many_handoffs": 409, "invalid_payload": 422,
    "message_too_large": 413, "body_too_large": 413,
    "validation_error": 422, "schema_too_new": 422, "invalid_export": 422,
    "too_many_requests": 429,
    "store_unavailable": 503, "store_busy": 503, "store_read_only": 503,
    "store_full": 503, "store_write_failed": 503, "session_lock_lost": 503,
    "store_error": 503, "store_corrupt": 503, "store_closed": 503, "no_model": 503,
}
"""The HTTP status of each code; a library code not listed is a 400 (the request could
not be served as asked) when it is a `HandoffsError`."""


class ApiError(Exception):
    """An error the API answers with: a stable code and a sentence saying what to do."""

    def __init__(self, code: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or STATUS.get(code, 400)


def body(code: str, message: str) -> dict[str, Any]:
    """The JSON of an error."""
    return {"error": {"code": code, "message": message}}


def respond(code: str, message: str, status: int | None = None) -> JSONResponse:
    return JSONResponse(body(code, message), status_code=status or STATUS.get(code, 400))


def from_exception(exc: BaseException) -> tuple[int, str, str]:
    """(status, code, message) for any exception, as the API reports it."""
    if isinstance(exc, ApiError):
        return exc.status, exc.code, exc.message
    if isinstance(exc, HandoffsError):
        return STATUS.get(exc.code, 400), exc.code, str(exc)
    log.error("unexpected error serving a request", exc_info=exc)
    return 500, "internal_error", "The server failed to handle this request; it is logged."


_HTTP_CODES = {401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 413: "body_too_large", 429: "too_many_requests"}


def install(app: FastAPI) -> None:
    """Answer every error of `app` in the one JSON shape."""

    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        status, code, message = from_exception(exc)
        return respond(code, message, status)

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "invalid_request")
        detail = exc.detail if isinstance(exc.detail, str) else "The request was refused."
        return respond(code, detail, exc.status_code if exc.status_code < 500 else 400)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return respond("invalid_json", "The body is not valid JSON.", 400)
        parts = []
        for e in errors[:5]:
            where = ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        return respond("validation_error", "The request is not valid: " + "; ".join(parts)
                       + ". See /docs for the expected shape.", 422)

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(HandoffsError, api_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, api_error)
