"""An application module as a user writes one: runners built with settings of their own,
for the tests that check the command line serves and runs them as built.

`APP_STORE` is the store the runners are built with; each span they make is appended to
`APP_SPANS` as a JSON line (`{"provider", "name", "attributes"}`), through the
OpenTelemetry SDK.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

from handoffs import Runner
from handoffs.examples.support import build_team, rule_model
from handoffs.telemetry import Telemetry


class FileExporter(SpanExporter):
    def __init__(self, provider: str) -> None:
        self.provider = provider

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(os.environ["APP_SPANS"], "a", encoding="utf-8") as f:
            for s in spans:
                f.write(json.dumps({"provider": self.provider, "name": s.name,
                                    "attributes": dict(s.attributes or {})},
                                   default=str) + "\n")
        return SpanExportResult.SUCCESS


def _provider(name: str) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileExporter(name)))
    return provider


# The application traces everything through a global provider...
trace.set_tracer_provider(_provider("global"))

STORE: Any = os.environ["APP_STORE"]

runner = Runner(build_team(), model=rule_model(), store=STORE, max_message_chars=60,
                telemetry=Telemetry(tracer_provider=_provider("own"), capture_content=True,
                                    workflow_name="acme-support"))
"""Its own tracer provider, content captured, a workflow name, a 60-character limit."""

untraced = Runner(build_team(), model=rule_model(), store=STORE, telemetry=False)
"""...except this runner, which is never traced."""
