"""handoffs: a handoff runtime for multi-agent LLM systems.

Agents pass a conversation, or a task, to one another: the model calls a
`transfer_to_<agent>` tool, a user picks an agent, code hands off, a failing agent
escalates. The runner validates each request against a policy, records it, and keeps
the session's active agent, so the next message goes to whoever took over.
"""

from .core.agent import Agent, HumanAgent
from .core.context import HandoffContext, RunContext
from .core.events import Event
from .core.guardrails import GuardrailResult
from .core.handoff import Handoff, HandoffReason, HandoffRecord
from .core.messages import AssistantMessage, Message, Note, ToolCall, ToolResult, UserMessage
from .core.policy import HandoffPolicy, Rejection
from .core.session import SessionState
from .core.team import Team
from .core.tools import HandoffTo, Tool, tool
from .errors import HandoffsError, ModelError, RunFailed, TeamError
from .runtime.result import RunError, RunResult, RunStatus
from .runtime.runner import Runner
from .runtime.summary import Summarizer
from .stores.memory import MemoryStore

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AssistantMessage",
    "Event",
    "GuardrailResult",
    "Handoff",
    "HandoffContext",
    "HandoffPolicy",
    "HandoffReason",
    "HandoffRecord",
    "HandoffTo",
    "HandoffsError",
    "HumanAgent",
    "MemoryStore",
    "Message",
    "ModelError",
    "Note",
    "Rejection",
    "RunContext",
    "RunError",
    "RunFailed",
    "RunResult",
    "RunStatus",
    "Runner",
    "SessionState",
    "Summarizer",
    "Team",
    "TeamError",
    "Tool",
    "ToolCall",
    "ToolResult",
    "UserMessage",
    "__version__",
    "tool",
]
