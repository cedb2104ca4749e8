"""A bound on request bodies, checked before anything reads them."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import body


class BodyLimit:
    """Refuse a request whose body exceeds `limit` bytes with 413 `body_too_large`,
    whether it says so in `Content-Length` or streams it chunked."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = self.limit + 1
                if declared > self.limit:
                    await self._refuse(send)
                    return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        whole: Message = {"type": "http.request", "body": b"".join(chunks),
                          "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _refuse(self, send: Send) -> None:
        payload = json.dumps(body("body_too_large", f"The body is larger than this "
                                  f"server takes ({self.limit:,} bytes).")).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


def _replay(messages: list[Any], then: Receive | None = None) -> Receive:
    async def receive() -> Message:
        if messages:
            m: Message = messages.pop(0)
            return m
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}
    return receive
