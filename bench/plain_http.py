"""A minimal HTTP/1.1 client for the benchmarks: one kept-alive connection on a plain
socket. A load generator on the machine it measures must take as little CPU as it can:
httpx spends a millisecond or more per request (and, with a hundred connections at once,
stalls for seconds), CPU and time the server under test would otherwise be charged with."""

from __future__ import annotations

import asyncio
import json
from typing import Any


class Plain:
    """One kept-alive HTTP/1.1 connection, a plain socket (`post` only: what the
    benchmarks send); tens of microseconds of client CPU per request."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, url: str) -> Plain:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, f"{host}:{port}")

    async def post(self, path: str, payload: dict[str, Any], token: str | None = None) \
            -> tuple[int, Any]:
        body = json.dumps(payload).encode()
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: "
                          f"application/json\r\nContent-Length: {len(body)}\r\n{auth}\r\n"
                          .encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        size = next(int(line.split(b":")[1]) for line in lines
                    if line.lower().startswith(b"content-length:"))
        return int(lines[0].split()[1]), json.loads(await self.reader.readexactly(size))

    def close(self) -> None:
        self.writer.close()
