"""``todo``: the model's task list for this session, shown to the user by ``/status``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from core.contracts.toolkit import Tool, ToolContext
from core.errors import ToolRetry

MAX_ITEMS = 50
MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}


class TodoItem(BaseModel):
    id: str = Field(min_length=1, max_length=40)
    content: str = Field(min_length=1, max_length=300)
    status: Literal["pending", "in_progress", "completed", "cancelled"] = "pending"


class TodoArgs(BaseModel):
    todos: list[TodoItem] | None = Field(default=None, max_length=MAX_ITEMS,
                                         description="Omit to read the list.")
    merge: bool = Field(default=False, description="Update by id instead of replacing.")


def render(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No tasks."
    done = sum(1 for i in items if i.get("status") == "completed")
    lines = [f"Tasks ({done}/{len(items)} done):"]
    lines += [f"{MARKS.get(i.get('status', 'pending'), '[ ]')} {i.get('id')}. {i.get('content')}"
              for i in items]
    return "\n".join(lines)


class Todo(Tool):
    name = "todo"
    description = "Keep this session's task list; the user sees it with /status."
    Args = TodoArgs
    deferred = True
    brief = "a task list for multi-step work"

    async def run(self, ctx: ToolContext, args: TodoArgs) -> str:
        from core.lanes import in_store_lane

        return await in_store_lane(ctx.user_id, self._update, ctx, args)

    def _update(self, ctx: ToolContext, args: TodoArgs) -> str:
        items = ctx.store.todos.get(ctx.user_id, ctx.session_id)
        if args.todos is None:
            return render(items)
        given = [item.model_dump() for item in args.todos]
        if len({i["id"] for i in given}) != len(given):
            raise ToolRetry("two tasks share an id; give each task its own id")
        if args.merge:
            by_id = {i["id"]: i for i in items}
            for item in given:
                by_id[item["id"]] = item
            order = [i["id"] for i in items] + [i["id"] for i in given
                                                if i["id"] not in {x["id"] for x in items}]
            items = [by_id[i] for i in order]
        else:
            items = given
        if len(items) > MAX_ITEMS:
            raise ToolRetry(f"at most {MAX_ITEMS} tasks; drop finished ones first")
        ctx.store.todos.put(ctx.user_id, ctx.session_id, items)
        return render(items)
