"""Every error as JSON `{"error": {"code", "message"}}`, with a 4xx status that fits.

The library's stable codes pass through unchanged; the status comes from the code.
Nothing a client sends can produce a 500 or a traceback: an unexpected exception is
logged here and answered `internal_error` with a sentence, never its text; so is a
model's or a turn's failure raised to a route (502 with its code and the customer's
sentence, `customer.sentence`). A store's
failure (`store_*`) is answered with its code and a sentence that names nothing of the
database (host, port, name, path); its own message and traceback go to the log.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import HandoffsError, ModelError, RunFailed, ScriptExhausted
from . import customer
from .views import Answer

log = logging.getLogger("handoffs.server")

STATUS: dict[str, int] = {
    "invalid_argument": 400, "invalid_request": 400, "invalid_json": 400,
    "unauthorized": 401,
    "forbidden": 403, "not_user_selectable": 403, "system_only": 403,
    "not_found": 404, "session_not_found": 404, "unknown_target": 404,
    "unknown_model": 404,
    "method_not_allowed": 405,
    "session_exists": 409, "session_busy": 409, "session_conflict": 409,
    "not_waiting_for_human": 409, "no_pending_approval": 409, "no_pending_tool_call": 409,
    "tool_name_taken": 409, "client_tools_unsupported": 501,
    "waiting_for_approval": 409, "target_disabled": 409, "held_by_person": 409,
    "channel_unsupported": 409,
    "turn_running": 409, "waiting_for_human": 409, "turn_not_recorded": 409,
    "invalid_turn": 400, "no_rewind": 409, "call_not_recorded": 404,
    "content_not_captured": 409, "invalid_model": 400,
    "idempotency_key_reused": 409, "idempotency_outcome_lost": 409,
    "idempotency_unsupported": 501,
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


_STORE_SAYS = {
    "store_unavailable": "The session store cannot be reached; try again shortly.",
    "store_busy": "The session store is busy; try again.",
    "store_read_only": "The session store refuses writes right now; try again later.",
    "store_corrupt": "The session store reported damaged data.",
}
"""What a client is told of a store's failure (the details are in the server's log)."""


class ApiError(Exception):
    """An error the API answers with: a stable code and a sentence saying what to do."""

    def __init__(self, code: str, message: str, status: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or STATUS.get(code, 400)
        self.headers = headers
        """Headers the answer carries (`Retry-After` of a 429)."""


class ErrorDetail(BaseModel):
    code: str
    """The stable code (`session_not_found`, `store_unavailable`, ...)."""
    message: str
    """A sentence saying what went wrong and what to do."""


class ErrorBody(BaseModel):
    """Every error answer: `{"error": {"code", "message"}}`."""

    error: ErrorDetail


def responses(*codes: str) -> dict[int | str, dict[str, Any]]:
    """The error answers a route may give, for its OpenAPI document: the codes grouped
    by their status, each status with the one error shape."""
    by_status: dict[int, list[str]] = {}
    for code in codes:
        by_status.setdefault(STATUS[code], []).append(code)
    return {status: {"model": ErrorBody,
                     "description": "Error codes: " + ", ".join(f"`{c}`" for c in found)}
            for status, found in sorted(by_status.items())}


def body(code: str, message: str) -> dict[str, Any]:
    """The JSON of an error."""
    return {"error": {"code": code, "message": message}}


def respond(code: str, message: str, status: int | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    return Answer(body(code, message), status_code=status or STATUS.get(code, 400),
                  headers=headers)


def from_exception(exc: BaseException) -> tuple[int, str, str]:
    """(status, code, message) for any exception, as the API reports it."""
    if isinstance(exc, ApiError):
        return exc.status, exc.code, exc.message
    if isinstance(exc, HandoffsError):
        if exc.code.startswith("store_"):
            log.error("the session store failed (%s): %s", exc.code, exc, exc_info=exc)
            said = _STORE_SAYS.get(exc.code, "The session store failed; try again.")
            return STATUS.get(exc.code, 503), exc.code, \
                f"{said} The server's log has the details."
        if isinstance(exc, ModelError | RunFailed | ScriptExhausted):
            # a provider's or a turn's failure: its text may name hosts or key fragments
            log.error("a model call failed serving a request (%s): %s", exc.code, exc,
                      exc_info=exc)
            return 502, exc.code, customer.sentence(exc.code)
        return STATUS.get(exc.code, 400), exc.code, str(exc)
    log.error("unexpected error serving a request", exc_info=exc)
    return 500, "internal_error", "The server failed to handle this request; it is logged."


_HTTP_CODES = {401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 413: "body_too_large", 429: "too_many_requests"}


def _allowed(request: Request) -> str:
    """The methods some route of the request's path takes, for a 405's `Allow`
    (Starlette names only those of the first route it found, and one path may have
    routes in two routers)."""
    from starlette.routing import Match

    scope = {**request.scope, "type": "http"}
    return ", ".join(m for m in ("GET", "POST", "PUT", "PATCH", "DELETE")
                     if any(route.matches({**scope, "method": m})[0] is Match.FULL
                            for route in request.app.routes))


def install(app: FastAPI) -> None:
    """Answer every error of `app` in the one JSON shape."""

    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        status, code, message = from_exception(exc)
        return respond(code, message, status,
                       exc.headers if isinstance(exc, ApiError) else None)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "invalid_request")
        detail = exc.detail if isinstance(exc.detail, str) else "The request was refused."
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = _allowed(request)
        return respond(code, detail, exc.status_code if exc.status_code < 500 else 400,
                       headers)

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
