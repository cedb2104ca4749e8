"""Security headers on every answer, and a strict Content Security Policy on the page.

Every response says `X-Content-Type-Options: nosniff` (a browser takes each type as
sent) and `X-Frame-Options: DENY` (no other site frames the page or the API docs). The
page (`/`, `/operator`, `/inspect`, `/static/...`) also gets `PAGE_CSP`: scripts, styles and
connections from this origin only, no inline script or style, nothing framed, and
`Referrer-Policy: no-referrer`. The API docs at `/docs` load Swagger UI from its CDN
and so go without the CSP.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'")
"""The page's policy: its own scripts, styles and API; `data:` images (the blank
favicon); the WebSocket and event stream of the same host (`connect-src 'self'`)."""

_ALWAYS = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY")]
_PAGE = [(b"content-security-policy", PAGE_CSP.encode()), (b"referrer-policy", b"no-referrer")]


def is_page(path: str) -> bool:
    """Whether `path` (without the app's root path) is the page or one of its files."""
    return path in ("/", "/operator", "/inspect") or path.startswith("/static/")


class SecurityHeaders:
    """ASGI middleware that adds the headers above to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):] or "/"
        extra = _ALWAYS + _PAGE if is_page(path) else _ALWAYS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
