"""The served team's A2A tasks, each kept with its owner: the hash of the session token of
the conversation (A2A context) it belongs to, read from the session when the task is
first stored. `owned` gives a task only to a caller that owns it; `list` (ListTasks)
lists a caller's own tasks, every task for the operator key. A task holds no secret: a
new conversation's token goes to the client that started it in its answer only
(`server.a2a_guard`).

Why per task, not per context: a conversation deleted and started again under the same
id by someone else has another token, and the first one's tasks stay the first one's.

The tasks live in this process's memory, as in the a2a-sdk's own `InMemoryTaskStore`;
each is copied in and out, so no caller changes what another reads.
"""

from __future__ import annotations

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import ListTasksCursor, decode_list_tasks_cursor, encode_list_tasks_cursor

from ..stores.base import SessionStore
from . import auth
from .a2a_callers import Caller, caller_of


class OwnedTasks(TaskStore):
    """An a2a-sdk task store whose tasks know their owner (see the module's doc)."""

    def __init__(self, sessions: SessionStore) -> None:
        """`sessions`: the store of the sessions the tasks are conversations of."""
        self._sessions = sessions
        self._tasks: dict[str, Task] = {}
        self._owners: dict[str, str | None] = {}

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Keep a copy of `task`; its owner is read from its session the first time."""
        if task.id not in self._owners:
            self._owners[task.id] = await self._owner(task.context_id)
        self._tasks[task.id] = _copy(task)

    async def _owner(self, session_id: str) -> str | None:
        state = await self._sessions.load(session_id)
        kept = state.metadata.get(auth.TOKEN_KEY) if state is not None else None
        return kept if isinstance(kept, str) else None

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """A copy of the task, whoever asks: the a2a-sdk's own reads, for calls
        `server.a2a_guard` let through."""
        task = self._tasks.get(task_id)
        return _copy(task) if task is not None else None

    def owned(self, task_id: str, caller: Caller) -> Task | None:
        """A copy of the task if `caller` owns it; None when there is no such task or it
        is someone else's (the two are never told apart)."""
        task = self._tasks.get(task_id)
        if task is None or not caller.owns(self._owners.get(task_id)):
            return None
        return _copy(task)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Forget the task."""
        self._tasks.pop(task_id, None)
        self._owners.pop(task_id, None)

    async def list(self, params: ListTasksRequest,
                   context: ServerCallContext) -> ListTasksResponse:
        """The caller's own tasks (every task for the operator key) that pass the
        request's filters, most recently updated first, a page at a time (page tokens as
        the a2a-sdk's own store makes them)."""
        caller = caller_of(context)
        tasks = [t for i, t in self._tasks.items() if caller.owns(self._owners.get(i))]
        if params.context_id:
            tasks = [t for t in tasks if t.context_id == params.context_id]
        if params.status:
            tasks = [t for t in tasks if t.status.state == params.status]
        if params.HasField("status_timestamp_after"):
            after = params.status_timestamp_after.ToNanoseconds()
            tasks = [t for t in tasks if t.status.HasField("timestamp")
                     and t.status.timestamp.ToNanoseconds() >= after]
        tasks.sort(key=_sort_key, reverse=True)
        start = 0
        if params.page_token:
            cursor = decode_list_tasks_cursor(params.page_token)
            if cursor is None:
                raise InvalidParamsError(f"Invalid page token: {params.page_token}")
            last = cursor.sort_key()
            start = next((i for i, t in enumerate(tasks) if _sort_key(t) < last),
                         len(tasks))
        size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        page = tasks[start:start + size]
        more = start + size < len(tasks)
        return ListTasksResponse(
            tasks=[_copy(t) for t in page], total_size=len(tasks), page_size=size,
            next_page_token=encode_list_tasks_cursor(_cursor(page[-1])) if more else None)


def _copy(task: Task) -> Task:
    out = Task()
    out.CopyFrom(task)
    return out


def _sort_key(task: Task) -> tuple[bool, int, str]:
    """ListTasks' order (descending): timestamped first, by timestamp, then by id."""
    stamped = task.HasField("status") and task.status.HasField("timestamp")
    return stamped, task.status.timestamp.ToNanoseconds() if stamped else 0, task.id


def _cursor(task: Task) -> ListTasksCursor:
    stamped, ns, task_id = _sort_key(task)
    return ListTasksCursor(timestamp_ns=ns if stamped else None, task_id=task_id)
