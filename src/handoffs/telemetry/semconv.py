"""The attribute, span and metric names this package writes, spelled out.

The GenAI names follow OpenTelemetry's GenAI semantic conventions as they stand (status
Development); they are written here rather than imported from OpenTelemetry's incubating
module, whose names move between releases. Names of our own are under `handoffs.`.
"""

from __future__ import annotations

# -- GenAI semantic conventions ---------------------------------------------------------

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
AGENT_DESCRIPTION = "gen_ai.agent.description"
WORKFLOW_NAME = "gen_ai.workflow.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
TOKEN_TYPE = "gen_ai.token.type"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
# Opt-in content (only with `Telemetry(capture_content=True)`):
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

INVOKE_WORKFLOW = "invoke_workflow"
INVOKE_AGENT = "invoke_agent"
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
HANDOFF = "handoff"
"""Ours: the operation of a `handoff {agent}` span (a handoff made without a tool call)."""

# -- ours ---------------------------------------------------------------------------------

TURN = "handoffs.turn"
"""The session's turn number."""
TURN_STATUS = "handoffs.turn.status"
"""How the turn ended: completed, handed_off, waiting_for_human, failed."""
TURN_CONTINUED = "handoffs.turn.continued"
"""True on the `invoke_workflow` of a turn's part continued after an approval."""
HANDOFF_SOURCE = "handoffs.handoff.source"
HANDOFF_TARGET = "handoffs.handoff.target"
HANDOFF_KIND = "handoffs.handoff.kind"
"""The record's reason: llm, programmatic, user_request, error_recovery, plan_step, ..."""
HANDOFF_ACCEPTED = "handoffs.handoff.accepted"
HANDOFF_REJECTION = "handoffs.handoff.rejection"
"""The stable rejection code of a refused handoff (absent when accepted)."""
HANDOFF_OUTCOME = "handoffs.handoff.outcome"
"""On metrics: `accepted`, or the rejection code."""
HANDOFF_RECORD = "handoffs.handoff.record_id"
HANDOFF_RETURNS = "handoffs.handoff.returns"
"""True for a delegation: the target's answer comes back to the source."""
HANDOFF_REASON = "handoffs.handoff.reason"
"""The requester's reason text (content: only when captured)."""
HANDOFF_TASK = "handoffs.handoff.task"
"""A delegation's task (content: only when captured)."""
HANDOFF_PAYLOAD = "handoffs.handoff.payload"
"""The handoff's payload as JSON (content: only when captured)."""
APPROVAL_APPROVED = "handoffs.approval.approved"
"""A person's decision on a tool call that waited for approval."""
APPROVAL_REASON = "handoffs.approval.reason"
"""The reason the person gave (content: only when captured)."""
APPROVAL_DECISION = "handoffs.approval.decision"
"""On metrics: `approved` or `rejected`."""
GUARDRAIL = "handoffs.guardrail.name"
GUARDRAIL_STAGE = "handoffs.guardrail.stage"

# -- metric instruments ---------------------------------------------------------------------

METRIC_HANDOFFS = "handoffs.handoff.requests"
METRIC_TURNS = "handoffs.turns"
METRIC_TURN_DURATION = "handoffs.turn.duration"
METRIC_AGENT_DURATION = "handoffs.agent.duration"
METRIC_GUARDRAIL_TRIPS = "handoffs.guardrail.trips"
METRIC_HUMAN_WAITS = "handoffs.human.waits"
METRIC_MODEL_DURATION = "gen_ai.client.operation.duration"
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"
METRIC_HANDOFF_LATENCY = "handoffs.handoff.latency"
METRIC_TOOL_DURATION = "handoffs.tool.duration"
METRIC_APPROVAL_WAIT = "handoffs.approval.wait"
