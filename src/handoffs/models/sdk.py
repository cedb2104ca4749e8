"""What the adapters over official provider SDKs share: the lazy SDK import, one client
per event loop, timeouts, and `complete` / `stream` with our retries. Each adapter adds
only its wire format: `body`, `_create`, `_response`, `_stream_once`.

One layer retries. The clients the adapters make have the SDK's own retries off, and a
client the user gives (`client=AsyncOpenAI(...)`) gets a copy with them off
(`with_options(max_retries=0)`) whenever `RetryPolicy` retries, so a failing call is
tried `max_retries + 1` times, not that times the SDK's. With `max_retries=0` the given
client keeps its own. Timeouts tell connecting (`connect_timeout`, short: nothing was
sent, so a retry is safe) from waiting for the answer (`timeout`, long enough for a
reasoning model): a read timeout comes after the request was sent and may have been run
and billed, so it is not sent again (`RetryPolicy.retry_read_timeouts` opts in).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from types import ModuleType
from typing import Any

from ..errors import ModelError, missing_extra
from .base import ModelRequest, ModelResponse, TextDelta
from .failures import to_model_error
from .retry import RetryPolicy, stream_with_retries, with_retries


def import_sdk(module: str, what: str, extra: str | None = None,
               package: str | None = None) -> ModuleType:
    """The provider's SDK, or an error naming the extra that installs it (`extra`: the
    extra's name when it is not the module's; `package`: the PyPI name, likewise)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_extra(f"{what} models need the {package or module} package",
                            extra or module) from exc


class ClientPerLoop:
    """Makes an SDK client on first use in each event loop, and reuses it there.

    An httpx client belongs to the event loop that opened it. The loop object itself is
    kept (not its id), so a new loop at a reused address is never mistaken for the old one.
    """

    __slots__ = ("_client", "_loop", "_make")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None

    def get(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._client is None:
            self._client = self._make()
            self._loop = loop
        return self._client


log = logging.getLogger("handoffs.models")

DEFAULT_TIMEOUT = 600.0
"""Seconds an adapter waits for the answer by default (between bytes of a streamed one):
the SDKs' own default, long enough for a reasoning model that thinks before it writes."""
DEFAULT_CONNECT_TIMEOUT = 10.0
"""Seconds an adapter waits to connect by default."""


class SDKModel:
    """Base of the SDK adapters. Subclasses set `provider` and implement the wire format."""

    provider: str
    _sdk: ModuleType
    """The provider's SDK module (set by the subclass before `__init__` runs)."""

    def __init__(self, model: str, *, client: Any, timeout: float, max_retries: int,
                 retry: RetryPolicy | None, settings: Mapping[str, Any] | None,
                 make_client: Callable[[], Any],
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        self.model = model
        self.timeout = timeout
        """Seconds to wait for the answer once the request is sent (between bytes)."""
        self.connect_timeout = connect_timeout
        """Seconds to wait to connect."""
        self.retry = retry or RetryPolicy(max_retries=max_retries)
        self.settings: dict[str, Any] = dict(settings or {})
        self._given = _one_retry_layer(client, self.retry, model)
        self._clients = ClientPerLoop(make_client)

    def http_timeout(self) -> Any:
        """The SDK's timeout value for the clients made here: `connect_timeout` to connect,
        `timeout` for the rest."""
        return self._sdk.Timeout(self.timeout, connect=self.connect_timeout)

    def _client(self) -> Any:
        if self._given is not None:
            return self._given
        self._check_credentials()
        return self._clients.get()

    def _check_credentials(self) -> None:
        """Raise `ModelError("auth_error")` before any request when they are missing."""

    def _classify(self, exc: BaseException) -> ModelError | None:
        return to_model_error(exc, self.provider, self.retry.retry_read_timeouts)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    async def _create(self, body: dict[str, Any]) -> Any:
        """One non-streaming request; returns the SDK's response object."""
        raise NotImplementedError

    def _response(self, raw: Any) -> ModelResponse:
        raise NotImplementedError

    def _stream_once(self, body: dict[str, Any]
                     ) -> AsyncIterator[TextDelta | ModelResponse]:
        raise NotImplementedError

    def _stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` for a streaming request."""
        body["stream"] = True
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = self.body(request)

        async def attempt() -> ModelResponse:
            return self._response(await self._create(body))

        return await with_retries(attempt, self.retry, self._classify)

    def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        body = self._stream_body(self.body(request))
        return stream_with_retries(lambda: self._stream_once(body), self.retry,
                                   self._classify)


def _one_retry_layer(client: Any, policy: RetryPolicy, model: str) -> Any:
    """A user's client as the adapter uses it: with the SDK's retries off while the
    library retries (its copy, from `with_options`), so retries do not multiply."""
    if client is None or policy.max_retries == 0:
        return client
    with_options = getattr(client, "with_options", None)
    if with_options is None or getattr(client, "max_retries", 0) == 0:
        return client
    log.debug("the client given for %s retries %s times itself; a copy without its "
              "retries is used, since RetryPolicy retries (max_retries=%s)", model,
              client.max_retries, policy.max_retries)
    return with_options(max_retries=0)
