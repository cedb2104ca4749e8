"""Per-session locks for durable stores: in-process queues and a cross-process file lock.

A turn holds its session's lock across model calls (seconds), so a database transaction
cannot be the lock. Two layers do the job:

- `KeyedLocks`: one `asyncio.Lock` per session id while anyone waits for it, so tasks of
  one process queue without spinning, and idle sessions, or a turn nobody waits behind,
  cost no lock.
- `RangeLock`: one byte of a lock file per session (its offset is a 62-bit hash of the
  id), locked with Linux open-file-description locks. The kernel releases them when the
  process dies, even by SIGKILL, so a crashed turn never leaves a stale lock and no
  expiry is needed; different sessions lock different bytes and never wait on each
  other. Waiting polls with a short back-off, which keeps cancellation trivial.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from ..errors import HandoffsError
from ..log import fields

T = TypeVar("T")

log = logging.getLogger("handoffs.stores.locks")

_FIRST_WAIT = 0.001
_MAX_WAIT = 0.025


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock: asyncio.Lock | None = None
        """Made when a second user comes, locked for the holder then: a session nobody
        else waits for is held without one (most turns)."""
        self.users = 0


class _Held:
    """What `KeyedLocks.hold` returns: a plain class, because every turn enters one."""

    __slots__ = ("entries", "entry", "key")

    def __init__(self, entries: dict[str, _Entry], key: str) -> None:
        self.entries = entries
        self.key = key
        self.entry: _Entry | None = None

    def held_at_once(self) -> bool:
        """Count this user in; True when it holds the key now (nobody held or waited),
        else it must `queue`."""
        entry = self.entries.get(self.key)
        if entry is None:
            entry = self.entries[self.key] = _Entry()
        entry.users += 1
        self.entry = entry
        return entry.lock is None and entry.users == 1

    async def queue(self) -> None:
        """Wait behind the holder and those queued before (after `held_at_once`)."""
        entry = self.entry
        assert entry is not None
        lock = entry.lock
        if lock is None:
            # The holder came first, without a lock: take this one on its behalf (a new
            # lock is free, so this does not wait), then wait behind it.
            lock = entry.lock = asyncio.Lock()
            await lock.acquire()
        t0 = time.monotonic()
        log.debug("session %r is busy with another turn in this process; waiting",
                  self.key, extra=fields(self.key, None, None))
        try:
            await lock.acquire()
        except BaseException:
            self._leave()
            raise
        if log.isEnabledFor(logging.DEBUG):
            log.debug("session %r: waited %.1f ms for another turn in this process",
                      self.key, (time.monotonic() - t0) * 1000,
                      extra=fields(self.key, None, None))

    async def __aenter__(self) -> None:
        if not self.held_at_once():
            await self.queue()

    def release(self) -> None:
        """Let the next user in (or forget the key when nobody waits)."""
        entry = self.entry
        assert entry is not None
        if entry.lock is not None:  # made while this holder held it: locked for it
            entry.lock.release()
        self._leave()

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    def _leave(self) -> None:
        entry = self.entry
        assert entry is not None
        entry.users -= 1
        if entry.users == 0 and self.entries.get(self.key) is entry:
            del self.entries[self.key]


class KeyedLocks:
    """One asyncio lock per key, dropped when nobody holds or waits for it."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def hold(self, key: str) -> _Held:
        """Held for a whole turn; holders of one key queue up in arrival order."""
        return _Held(self._entries, key)

    def __len__(self) -> int:
        return len(self._entries)


async def finish(work: Coroutine[Any, Any, T]) -> T:
    """Run `work` to its end even if the caller is cancelled meanwhile.

    A write that has started must complete (or fail) before its turn lets go of the
    session's lock: otherwise the next turn reads the old version while the write is
    still landing, and its own commit is refused. A cancel is delivered once the work
    is over; a second cancel while waiting does not cut it short either.
    """
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        exc = None if task.cancelled() else task.exception()
        log.debug("a write finished (%s) before its cancelled caller let go",
                  "failed" if exc is not None else "done")
        raise asyncio.CancelledError() from exc
    return task.result()


def lock_key(session_id: str, namespace: str = "") -> int:
    """A stable signed 63-bit key for a session id (PostgreSQL advisory locks take int8)."""
    import hashlib  # PostgreSQL only: not on every store's import

    digest = hashlib.blake2b(f"{namespace}\0{session_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True) >> 1


async def poll(try_once: Callable[[], Awaitable[bool]], what: str,
               timeout: float | None, session_id: str | None = None) -> None:
    """Await `try_once()` until it returns True, backing off from 1 ms to 25 ms.

    A wait is logged at DEBUG when it starts and when it ends (with `session_id`)."""
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    wait = _FIRST_WAIT
    tries = 0
    extra = fields(session_id, None, None) if session_id is not None else None
    while True:
        if await try_once():
            if tries:
                log.debug("%s: waited %.1f ms for another process's turn (%d tries)", what,
                          (time.monotonic() - start) * 1000, tries + 1, extra=extra)
            return
        if not tries:
            log.debug("%s is held by another process's turn; waiting", what, extra=extra)
        tries += 1
        if deadline is not None and time.monotonic() >= deadline:
            raise HandoffsError(
                f"{what} is busy: another turn held it for more than {timeout:g} s. "
                "Retry later, or raise the store's lock_timeout.",
                code="session_busy",
            )
        await asyncio.sleep(wait)
        wait = min(wait * 2, _MAX_WAIT)


class RangeLock:
    """Exclusive one-byte locks in one file, one byte per session, across processes.

    Uses open-file-description locks (`F_OFD_SETLK`, Linux): they belong to this
    object's file descriptor, so two stores in one process exclude each other as two
    processes do. Elsewhere it falls back to POSIX record locks (`lockf`), which belong
    to the process: there, use one store object per database file in each process.
    Without `fcntl` (Windows) only the in-process lock applies.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            self._fcntl = None
            return
        self._fcntl = fcntl
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self._ofd = hasattr(fcntl, "F_OFD_SETLK") and sys.platform.startswith("linux")

    def _call(self, key: int, kind: int) -> bool:
        fcntl = self._fcntl
        if fcntl is None or self._fd is None:
            return True
        offset = key & ((1 << 62) - 1)
        try:
            if self._ofd:
                # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks).
                arg = struct.pack("@hhqqi4x", kind, os.SEEK_SET, offset, 1, 0)
                fcntl.fcntl(self._fd, fcntl.F_OFD_SETLK, arg)
            else:  # pragma: no cover - non-Linux
                op = fcntl.LOCK_UN if kind == fcntl.F_UNLCK else fcntl.LOCK_EX | fcntl.LOCK_NB
                fcntl.lockf(self._fd, op, 1, offset, os.SEEK_SET)
        except (BlockingIOError, PermissionError):
            return False
        return True

    def try_acquire(self, key: int) -> bool:
        """Take the session's byte if it is free; never blocks."""
        fcntl = self._fcntl
        return True if fcntl is None else self._call(key, fcntl.F_WRLCK)

    def release(self, key: int) -> None:
        fcntl = self._fcntl
        if fcntl is not None:
            self._call(key, fcntl.F_UNLCK)

    def is_free(self, key: int) -> bool:
        """True when no other holder has the byte (probe by taking and releasing it)."""
        if not self.try_acquire(key):
            return False
        self.release(key)
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
