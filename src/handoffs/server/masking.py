"""No secret in a log line: `?access_token=` values are masked wherever the server's
request lines are written.

EventSource and WebSocket clients pass a session's token (or the operator key) in the
URL, and uvicorn writes URLs in its HTTP access lines (`uvicorn.access`) and its
WebSocket lines (`uvicorn.error`: `"WebSocket /v1/sessions/s_…/ws?access_token=…"
[accepted]`); `websockets` logs the request line when debugging. `create_app` puts
`MaskSecrets` on each of those loggers, once per process, so every deployment of the app
gets it, whatever starts uvicorn. Other ASGI servers log URLs through loggers of their
own: add `MaskSecrets()` to those.
"""

from __future__ import annotations

import logging
import re

LOGGERS = ("uvicorn.access", "uvicorn.error", "uvicorn", "websockets", "websockets.server",
           "websockets.protocol", "websockets.legacy.server")
"""The loggers that may write a request's URL."""

_SECRET = re.compile(r"(\b(?:access_token|token|api_key|key)=)[^&\s\"'#]+", re.IGNORECASE)


def mask(text: str) -> str:
    """`text` with the value of every `access_token=` (and `token=`, `key=`,
    `api_key=`) parameter replaced by `***`."""
    return _SECRET.sub(r"\1***", text) if "=" in text else text


class MaskSecrets(logging.Filter):
    """Masks secrets passed in URLs in a record's message and arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = mask(record.msg)
        args = record.args
        if isinstance(args, tuple) and args:
            record.args = tuple(mask(a) if isinstance(a, str) else a for a in args)
        elif isinstance(args, dict):
            record.args = {k: mask(v) if isinstance(v, str) else v for k, v in args.items()}
        return True


def install() -> None:
    """Put `MaskSecrets` on every logger in `LOGGERS` (once)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, MaskSecrets) for f in logger.filters):
            logger.addFilter(MaskSecrets())
