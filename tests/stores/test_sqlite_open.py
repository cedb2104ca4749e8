"""A SQLite database opened while another process writes to it (several workers starting
on one new file): the store waits for its turn to switch the file to WAL mode instead of
failing at once with 'database is locked'."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from handoffs.stores.sqlite import SQLiteStore


def test_opening_a_database_another_process_is_writing_waits_for_it(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()  # not WAL yet
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sqlite3, sys, time
        c = sqlite3.connect({str(path)!r}, isolation_level=None)
        c.execute("BEGIN IMMEDIATE")
        c.execute("INSERT INTO t VALUES (1)")
        print("holding", flush=True)
        time.sleep(0.8)
        c.execute("COMMIT")
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        started = time.monotonic()
        store = SQLiteStore(path)
        assert time.monotonic() - started >= 0.3  # it waited for the writer
        mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        asyncio.run(store.close())
    finally:
        holder.wait(10)
