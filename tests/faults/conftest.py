"""The durable stores (SQLite, PostgreSQL) that real processes can share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stores.conftest import Backend, backend_for


@pytest.fixture(params=["sqlite", "postgres"])
async def durable_backend(request: pytest.FixtureRequest,
                          tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as b:
        yield b
