"""Which store a URL names: `memory://`, `sqlite:///path.db`, `postgresql://...` (the
durable stores' modules and drivers are imported only when named)."""

from __future__ import annotations

from ..errors import HandoffsError
from .base import SessionStore


def open_store(spec: SessionStore | str | None) -> SessionStore:
    """A store from an object or a URL: `memory://`, `sqlite:///path.db`, `postgresql://...`.

    `sqlite:///rel/path.db` is relative to the working directory, `sqlite:////abs/path.db`
    absolute; an in-memory SQLite database (gone with the process) only when asked for:
    `sqlite:///:memory:`. A PostgreSQL URL may carry `?schema=name` to keep the tables in
    that schema.
    """
    from .memory import MemoryStore

    if spec is None:
        return MemoryStore()
    if not isinstance(spec, str):
        return spec
    if spec in ("memory", "memory://", ":memory:"):
        return MemoryStore()
    if spec.startswith("sqlite:"):
        from .sqlite import SQLiteStore

        return SQLiteStore(sqlite_path(spec))
    if spec.startswith(("postgres://", "postgresql://")):
        from .postgres import PostgresStore

        return PostgresStore(spec)
    raise HandoffsError(
        f"Unknown store URL {spec!r}; use memory://, sqlite:///path.db or postgresql://...",
        code="invalid_store",
    )


def sqlite_path(url: str) -> str:
    """The file path in a `sqlite:` URL; `invalid_store` if it names none."""
    rest = url.split(":", 1)[1]
    path = rest[3:] if rest.startswith("///") else rest.removeprefix("//")
    if path in ("", "/") or path.endswith("/"):
        raise HandoffsError(
            f"The store URL {url!r} names no database file. Use sqlite:///path/to/file.db "
            "(relative to the working directory; sqlite:////abs/path.db for an absolute "
            "path), or sqlite:///:memory: for a database that lives only as long as this "
            "process.", code="invalid_store")
    return path
