"""SDK clients kept one per event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


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
