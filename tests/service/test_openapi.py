"""The OpenAPI document says what the server answers: every error a route can give (in
the one error shape), and the bounds of its parameters."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .conftest import Served

DOCS = Path(__file__).resolve().parents[2] / "docs" / "serving.md"


def _document(served: Served) -> dict[str, Any]:
    r = served.client.get("/openapi.json")
    assert r.status_code == 200
    doc: dict[str, Any] = r.json()
    return doc


def test_each_route_declares_the_errors_it_can_answer(served: Served) -> None:
    paths = _document(served)["paths"]
    messages = paths["/v1/sessions/{session_id}/messages"]["post"]["responses"]
    assert {"401", "403", "404", "409", "413", "422", "429", "503"} <= set(messages)
    assert "`session_busy`" in messages["409"]["description"]
    assert messages["401"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"}
    assert messages["422"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"}  # our shape, not FastAPI's
    for path, operations in paths.items():
        for method, op in operations.items():
            if path in ("/healthz", "/v1/team", "/v1/config", "/v1/models"):
                continue
            errors = [s for s in op["responses"] if s.startswith(("4", "5"))]
            assert errors, f"{method.upper()} {path} declares no error answer"


def test_every_status_of_the_docs_error_table_is_declared(served: Served) -> None:
    paths = _document(served)["paths"]
    declared = {status for operations in paths.values() for op in operations.values()
                for status in op["responses"]}
    table = DOCS.read_text().split("## Errors", 1)[1].split("##", 1)[0]
    documented = set(re.findall(r"^\| (\d{3}) \|", table, re.MULTILINE))
    assert documented and documented - {"405"} <= declared


def test_the_listing_declares_the_bounds_of_limit(served: Served) -> None:
    params = _document(served)["paths"]["/v1/sessions"]["get"]["parameters"]
    limit = next(p for p in params if p["name"] == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 500)
    assert limit["schema"]["default"] == 50
