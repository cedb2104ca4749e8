"""The caller's trace: a request's W3C trace context (`traceparent`, `tracestate`,
`baggage`) becomes the context the request is handled in, so a turn it starts (over
HTTP, the WebSocket or the OpenAI-compatible endpoint) is a child of the caller's span.

Recent FastAPI releases do this themselves when a global tracer provider is set, as does
`opentelemetry-instrumentation-asgi`: their server span is then current and this leaves
it alone. Older ones (any the `server` extra allows) do not, and a runner may trace to a
provider of its own (`Telemetry(tracer_provider=...)`) that no middleware knows about.
Nothing is read, and OpenTelemetry is not imported, unless the runner is traced and the
request has a `traceparent`.
"""

from __future__ import annotations

from typing import Any

from ..runtime.runner import Runner

_TRACEPARENT = b"traceparent"


class TraceContext:
    """Pure ASGI middleware: HTTP and WebSocket scopes run in the caller's trace."""

    def __init__(self, app: Any, runner: Runner) -> None:
        self.app = app
        self.runner = runner

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        ctx = None
        if scope["type"] in ("http", "websocket"):
            headers = scope.get("headers") or ()
            if any(k == _TRACEPARENT for k, _ in headers) and self._traced():
                ctx = _extract(headers)
        if ctx is None:
            await self.app(scope, receive, send)
            return
        from opentelemetry import context

        token = context.attach(ctx)
        try:
            await self.app(scope, receive, send)
        finally:
            context.detach(token)

    def _traced(self) -> bool:
        telemetry = self.runner.telemetry
        return telemetry is not None and telemetry.tracer() is not None


def _extract(headers: Any) -> Any:
    """The caller's context, or None when a server span is already current."""
    from opentelemetry import propagate, trace

    if trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    for k, v in headers:
        name = k.decode("latin-1").lower()
        value = v.decode("latin-1")
        carrier[name] = f"{carrier[name]},{value}" if name in carrier else value
    return propagate.extract(carrier)
