"""Who may do what over A2A: every JSON-RPC method of the served team goes through `Guard`,
which checks the caller's credential (`server.a2a_callers`) before the a2a-sdk's own
request handler sees the call.

- A method that names a task (GetTask, SubscribeToTask, CancelTask, SendMessage with a
  `taskId`, the push notification configs) needs the credential that owns it: its
  conversation's session token, or the operator key. Anyone else is answered exactly
  what the a2a-sdk answers for a task that does not exist (`TaskNotFoundError`), so
  nobody learns which task ids exist.
- A message into a conversation (a `contextId`) needs its token, or the operator key;
  else `InvalidParamsError` and nothing is stored. A message with no `contextId`, or
  one naming a conversation no one holds yet, starts a new conversation (a session) and
  needs no credential: its token goes to that caller alone, in the metadata
  (`TOKEN_FIELD`) of the first `Task` of the answer, and is kept nowhere but there (the
  session keeps its hash).
- ListTasks lists the caller's own tasks, every task for the operator key (the task
  store does: `server.a2a_tasks`).

`Guard` implements every method of the a2a-sdk's `RequestHandler` itself, so a method a
later a2a-sdk adds is abstract here: the server fails to start rather than serve it
unchecked.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import RequestHandler
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError
from a2a.utils.proto_utils import validate_proto_required_fields

from ..core.remote import TOKEN_FIELD
from .a2a_callers import caller_of
from .a2a_tasks import OwnedTasks
from .contexts import open_context
from .service import Service, new_session_id


class Guard(RequestHandler):
    """The a2a-sdk's request handler `inner`, behind the checks in the module's doc."""

    def __init__(self, inner: RequestHandler, tasks: OwnedTasks, service: Service) -> None:
        """`inner`: the handler that serves what passes; `tasks`: its task store;
        `service`: the server's (its sessions and operator key)."""
        self._inner = inner
        self._tasks = tasks
        self._svc = service

    def _owned(self, task_id: str, context: ServerCallContext, *, sent: bool = False) -> Task:
        task = self._tasks.owned(task_id, caller_of(context))
        if task is None:  # worded as the a2a-sdk words a task that does not exist
            raise TaskNotFoundError(f"Task {task_id} not found") if sent \
                else TaskNotFoundError()
        return task

    async def _opened(self, params: SendMessageRequest,
                      context: ServerCallContext) -> str | None:
        """Check a message's right to the task or conversation it names, making the
        conversation when it is new; the new conversation's token, else None."""
        validate_proto_required_fields(params)  # before a session is made for it
        message = params.message
        if message.task_id:
            task = self._owned(message.task_id, context, sent=True)
            if not message.context_id:  # the task's conversation, not a new one
                message.context_id = task.context_id
            if await self._svc.store.load(task.context_id) is None:  # deleted since
                raise TaskNotFoundError(f"Task {message.task_id} not found")
            return None
        if not message.context_id:
            message.context_id = new_session_id()
        sid = message.context_id
        opened = await open_context(self._svc, sid, caller_of(context).secret)
        if opened.refused == "invalid_argument":
            raise InvalidParamsError(opened.message)
        if opened.refused is not None:
            raise InvalidParamsError(
                f"Conversation {sid!r} is not open to this caller: present its session "
                "token (Authorization: Bearer ...), given in the first answer of the "
                "conversation, or leave contextId out to start a new one.")
        return opened.token

    async def on_message_send(self, params: SendMessageRequest,
                              context: ServerCallContext) -> Task | Message:
        """SendMessage: the task's answer, with a new conversation's token."""
        token = await self._opened(params, context)
        result = await self._inner.on_message_send(params, context)
        return _given(result, token) if isinstance(result, Task) else result

    async def on_message_send_stream(self, params: SendMessageRequest,
                                     context: ServerCallContext
                                     ) -> AsyncGenerator[Event, None]:
        """SendStreamingMessage: the task's events, the first `Task` with a new
        conversation's token."""
        token = await self._opened(params, context)
        async with aclosing(self._inner.on_message_send_stream(params, context)) as events:
            async for event in events:
                if token is not None and isinstance(event, Task):
                    event, token = _given(event, token), None
                yield event

    async def on_get_task(self, params: GetTaskRequest,
                          context: ServerCallContext) -> Task | None:
        """GetTask, for its owner."""
        self._owned(params.id, context)
        return await self._inner.on_get_task(params, context)

    async def on_list_tasks(self, params: ListTasksRequest,
                            context: ServerCallContext) -> ListTasksResponse:
        """ListTasks: the caller's own (`OwnedTasks.list`)."""
        return await self._inner.on_list_tasks(params, context)

    async def on_cancel_task(self, params: CancelTaskRequest,
                             context: ServerCallContext) -> Task | None:
        """CancelTask, for its owner."""
        self._owned(params.id, context)
        return await self._inner.on_cancel_task(params, context)

    async def on_subscribe_to_task(self, params: SubscribeToTaskRequest,
                                   context: ServerCallContext
                                   ) -> AsyncGenerator[Event, None]:
        """SubscribeToTask, for its owner."""
        self._owned(params.id, context)
        async with aclosing(self._inner.on_subscribe_to_task(params, context)) as events:
            async for event in events:
                yield event

    async def on_create_task_push_notification_config(
            self, params: TaskPushNotificationConfig,
            context: ServerCallContext) -> TaskPushNotificationConfig:
        """A task's push notification config, for its owner."""
        self._owned(params.task_id, context)
        return await self._inner.on_create_task_push_notification_config(params, context)

    async def on_get_task_push_notification_config(
            self, params: GetTaskPushNotificationConfigRequest,
            context: ServerCallContext) -> TaskPushNotificationConfig:
        """A task's push notification config, for its owner."""
        self._owned(params.task_id, context)
        return await self._inner.on_get_task_push_notification_config(params, context)

    async def on_list_task_push_notification_configs(
            self, params: ListTaskPushNotificationConfigsRequest,
            context: ServerCallContext) -> ListTaskPushNotificationConfigsResponse:
        """A task's push notification configs, for its owner."""
        self._owned(params.task_id, context)
        return await self._inner.on_list_task_push_notification_configs(params, context)

    async def on_delete_task_push_notification_config(
            self, params: DeleteTaskPushNotificationConfigRequest,
            context: ServerCallContext) -> None:
        """A task's push notification config, for its owner."""
        self._owned(params.task_id, context)
        await self._inner.on_delete_task_push_notification_config(params, context)

    async def on_get_extended_agent_card(self, params: GetExtendedAgentCardRequest,
                                         context: ServerCallContext) -> AgentCard:
        """The extended card (the a2a-sdk's answer: this team has none)."""
        return await self._inner.on_get_extended_agent_card(params, context)


def _given(task: Task, token: str | None) -> Task:
    """`task` as its caller gets it: with the new conversation's token, when there is one
    (a copy: the stored task never holds it)."""
    if token is None:
        return task
    out = Task()
    out.CopyFrom(task)
    out.metadata.update({TOKEN_FIELD: token})
    return out
