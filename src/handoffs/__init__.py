"""handoffs: a handoff runtime for multi-agent LLM systems.

Agents pass a conversation, or a task, to one another: the model calls a
`transfer_to_<agent>` tool, a user picks an agent, code hands off, a failing agent
escalates. The runner validates each request against a policy, records it, and keeps
the session's active agent, so the next message goes to whoever took over.
"""

from typing import TYPE_CHECKING

from .core.agent import Agent, HumanAgent
from .core.context import HandoffContext, RunContext
from .core.events import Event
from .core.guardrails import (
    Guardrail,
    GuardrailCheck,
    GuardrailResult,
    deny_patterns,
    guardrail,
    json_output,
    max_length,
    min_length,
)
from .core.handoff import Handoff, HandoffReason, HandoffRecord
from .core.messages import AssistantMessage, Message, Note, ToolCall, ToolResult, UserMessage
from .core.plan import PlanStep
from .core.policy import HandoffPolicy, Rejection
from .core.session import SessionState
from .core.team import Team
from .core.tools import HandoffTo, Tool, ToolSpec, tool
from .errors import HandoffsError, ModelError, RunFailed, ScriptExhausted, TeamError
from .lazy import lazy_names

if TYPE_CHECKING:
    from .core.remote import RemoteAgent
    from .mcp.servers import MCPServer, MCPToolServer
    from .models.base import Model, ModelRequest, ModelResponse, TextDelta, Usage
    from .models.registry import get_model, register_provider
    from .models.retry import RetryPolicy
    from .rules import Rule, RuleModel
    from .runtime.effects.summary import Summarizer
    from .runtime.replay import Replay
    from .runtime.runner import Runner
    from .runtime.state.result import RunError, RunResult, RunStatus
    from .stores.base import SessionStore, SessionSummary
    from .stores.memory import MemoryStore
    from .stores.opening import open_store
    from .stores.postgres import PostgresStore
    from .stores.sqlite import SQLiteStore
    from .testing import ScriptedModel

# The runtime pulls in asyncio (about 30 ms here), the stores and models theirs; they load
# on first use of these names, so `import handoffs` and defining agents and teams stay
# light (PEP 562).
_LAZY = {
    "Runner": "runtime.runner",
    "RemoteAgent": "core.remote",
    "Replay": "runtime.replay",
    "RunResult": "runtime.state.result",
    "RunStatus": "runtime.state.result",
    "RunError": "runtime.state.result",
    "Summarizer": "runtime.effects.summary",
    "MemoryStore": "stores.memory",
    "SQLiteStore": "stores.sqlite",
    "PostgresStore": "stores.postgres",
    "SessionStore": "stores.base",
    "SessionSummary": "stores.base",
    "open_store": "stores.opening",
    "Model": "models.base",
    "ModelRequest": "models.base",
    "ModelResponse": "models.base",
    "TextDelta": "models.base",
    "Usage": "models.base",
    "RetryPolicy": "models.retry",
    "get_model": "models.registry",
    "register_provider": "models.registry",
    "ScriptedModel": "testing",
    "Rule": "rules",
    "RuleModel": "rules",
    "MCPServer": "mcp.servers",
    "MCPToolServer": "mcp.servers",
}


__getattr__ = lazy_names(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(__all__)

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AssistantMessage",
    "Event",
    "Guardrail",
    "GuardrailCheck",
    "GuardrailResult",
    "Handoff",
    "HandoffContext",
    "HandoffPolicy",
    "HandoffReason",
    "HandoffRecord",
    "HandoffTo",
    "HandoffsError",
    "HumanAgent",
    "MCPServer",
    "MCPToolServer",
    "MemoryStore",
    "Message",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "Note",
    "PlanStep",
    "PostgresStore",
    "Rejection",
    "RemoteAgent",
    "Replay",
    "RetryPolicy",
    "Rule",
    "RuleModel",
    "RunContext",
    "RunError",
    "RunFailed",
    "RunResult",
    "RunStatus",
    "Runner",
    "SQLiteStore",
    "ScriptExhausted",
    "ScriptedModel",
    "SessionState",
    "SessionStore",
    "SessionSummary",
    "Summarizer",
    "Team",
    "TeamError",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "__version__",
    "deny_patterns",
    "get_model",
    "guardrail",
    "json_output",
    "max_length",
    "min_length",
    "open_store",
    "register_provider",
    "tool",
]
