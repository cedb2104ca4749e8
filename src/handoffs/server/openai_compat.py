"""The team as one OpenAI-compatible model (filled in below)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/v1", tags=["openai"])
