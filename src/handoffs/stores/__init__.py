"""Session stores: where conversations live between turns.

`MemoryStore` is in process; durable stores (SQLite, PostgreSQL) load their modules and
drivers only when first named (`from handoffs.stores import PostgresStore` does not
import asyncpg: the first connection does).
"""

from typing import TYPE_CHECKING, Any

from .base import SessionStore, SessionSummary, open_store
from .memory import MemoryStore

if TYPE_CHECKING:
    from .postgres import PostgresStore
    from .sqlite import SQLiteStore

_LAZY = {"SQLiteStore": "sqlite", "PostgresStore": "postgres"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'handoffs.stores' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = ["MemoryStore", "PostgresStore", "SQLiteStore", "SessionStore", "SessionSummary",
           "open_store"]
