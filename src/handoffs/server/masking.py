"""No secret in a log line or a trace: `?access_token=` values are masked wherever the
server's request lines are written, and taken out of the URL before the app reads it.

EventSource and WebSocket clients pass a session's token (or the operator key) in the
URL, and uvicorn writes URLs in its HTTP access lines (`uvicorn.access`) and its
WebSocket lines (`uvicorn.error`: `"WebSocket /v1/sessions/s_…/ws?access_token=…"
[accepted]`); `websockets` logs the request line when debugging; `sse_starlette` (the
a2a-sdk's event streams) logs every chunk it sends when debugging, a new conversation's
token included. `create_app` puts `MaskSecrets` on each of those loggers, once per
process, so every deployment of the app gets it, whatever starts uvicorn. Other ASGI
servers log URLs through loggers of their own: add `MaskSecrets()` to those.

Inside the app, `secret_out_of_url` moves the secret from the URL to the request's
`Authorization` header before anything reads the request: FastAPI's own telemetry
records a request's query (`url.query`) in its span when OpenTelemetry is on.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode

LOGGERS = ("uvicorn.access", "uvicorn.error", "uvicorn", "websockets", "websockets.server",
           "websockets.protocol", "websockets.legacy.server", "sse_starlette.sse")
"""The loggers that may write a request's URL or a stream's chunks."""

_SECRET = re.compile(r"(\b(?:access_token|token|api_key|key)=)[^&\s\"'#]+", re.IGNORECASE)
_JSON_SECRET = re.compile(r'("(?:handoffs_session_token|token)"\s*:\s*")[^"]*"')


def mask(text: str) -> str:
    """`text` with the value of every `access_token=` (and `token=`, `key=`,
    `api_key=`) parameter, and of every JSON `"token"` and `"handoffs_session_token"`
    member, replaced by `***`."""
    if "=" in text:
        text = _SECRET.sub(r"\1***", text)
    if "token" in text:
        text = _JSON_SECRET.sub(r'\1***"', text)
    return text


def secret_out_of_url(scope: Any) -> Any:
    """An HTTP or WebSocket scope without `?access_token=`: its value becomes the
    request's `Authorization: Bearer` header, unless one is there already (which wins,
    as `auth.presented` reads them). Any other scope, or one with no such parameter (or
    a value no header can carry), is returned as it is."""
    query: bytes = scope.get("query_string") or b""
    if scope.get("type") not in ("http", "websocket") or b"access_token=" not in query:
        return scope
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    secret = next((v for k, v in reversed(pairs) if k == "access_token"), "")
    headers = list(scope.get("headers") or ())
    if secret and not any(k == b"authorization" and _is_bearer(v) for k, v in headers):
        try:
            value = b"Bearer " + secret.encode("latin-1")
        except UnicodeEncodeError:
            return scope
        headers = [(k, v) for k, v in headers if k != b"authorization"]
        headers.append((b"authorization", value))
    rest = urlencode([(k, v) for k, v in pairs if k != "access_token"])
    return {**scope, "query_string": rest.encode("latin-1"), "headers": headers}


def _is_bearer(value: bytes) -> bool:
    scheme, _, secret = value.partition(b" ")
    return scheme.lower() == b"bearer" and bool(secret.strip())


class MaskSecrets(logging.Filter):
    """Masks secrets passed in URLs, and JSON token members, in a record's message and
    arguments (text or bytes: a stream's chunks are logged as bytes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = mask(record.msg)
        args = record.args
        if isinstance(args, tuple) and args:
            record.args = tuple(_masked(a) for a in args)
        elif isinstance(args, dict):
            record.args = {k: _masked(v) for k, v in args.items()}
        return True


def _masked(arg: Any) -> Any:
    if isinstance(arg, str):
        return mask(arg)
    if isinstance(arg, bytes | bytearray):
        text = bytes(arg).decode("utf-8", "replace")
        masked = mask(text)
        return arg if masked == text else masked.encode("utf-8")
    return arg


def install() -> None:
    """Put `MaskSecrets` on every logger in `LOGGERS` (once)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, MaskSecrets) for f in logger.filters):
            logger.addFilter(MaskSecrets())
