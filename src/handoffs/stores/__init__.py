"""Session stores: where conversations live between turns.

`MemoryStore` is in process; durable stores (SQLite, PostgreSQL) load their modules and
drivers only when first named (`from handoffs.stores import PostgresStore` does not
import asyncpg: the first connection does). Every store's module loads when first named
or opened, the memory store's too, so importing the runtime does not build them.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .base import SessionStore, SessionSummary
from .opening import open_store

if TYPE_CHECKING:
    from .memory import MemoryStore
    from .postgres import PostgresStore
    from .sqlite import SQLiteStore

_LAZY = {"MemoryStore": "memory", "SQLiteStore": "sqlite", "PostgresStore": "postgres"}


__getattr__ = lazy_names(__name__, _LAZY, globals())


__all__ = ["MemoryStore", "PostgresStore", "SQLiteStore", "SessionStore", "SessionSummary",
           "open_store"]
