"""AG-UI (placeholder until the router is written)."""

from fastapi import APIRouter

router = APIRouter(tags=["agui"])
