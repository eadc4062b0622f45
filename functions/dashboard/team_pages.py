"""Team: the viewer's teams with members and roles, team notes with their writers, notes held
for an admin (approve or reject), the team's skills (an admin approves, rejects or rolls back),
adding people, leaving, and the audit log. Every action runs
as the viewer through ``core.teams.manage``, so the store checks membership and role exactly
as it does for ``/team`` in a chat."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.teams import team_views
from core.errors import IrisUsageError
from core.teams import manage, skills
from functions.dashboard.guard import Viewer, back, form_checked, notice, own, runtime
from functions.dashboard.web import Handler, page, render


def team_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    views = team_views(runtime(request).store, seen.user_id)
    return render(request, "team.html", viewer=seen, notice=notice(request, seen), teams=views)


def _field(form: FormData | None, name: str, limit: int = 200) -> str:
    value = str((form.get(name) if form is not None else None) or "").strip()
    if not value:
        raise IrisUsageError(f"the form lacks {name!r}")
    return value[:limit]


def _act(request: Request, form: FormData | None, action: str) -> tuple[Viewer, str]:
    seen = own(request)
    form_checked(request, seen, form)
    store = runtime(request).store
    team = _field(form, "team")
    if action == "decide":
        approve = _field(form, "decision") == "approve"
        return seen, manage.decide(store, seen.user_id, team, _field(form, "note"), approve)
    if action == "skill":
        name, decision = _field(form, "skill", 64), _field(form, "decision")
        version = str((form.get("version") if form is not None else None) or "").strip() or None
        if decision == "rollback":
            return seen, skills.rollback(store, seen.user_id, team, name, version)
        if decision not in ("approve", "reject"):
            raise IrisUsageError(f"unknown decision {decision!r}")
        return seen, skills.decide(
            store, seen.user_id, team, name, decision == "approve", version
        )
    if action == "add":
        role = str((form.get("role") if form is not None else None) or "member")
        return seen, manage.add(store, seen.user_id, team, _field(form, "account"), role)
    return seen, manage.remove(store, seen.user_id, team)


def _handler(action: str) -> Handler:
    def handle(request: Request, form: FormData | None) -> Response:
        seen = own(request)
        where = f"/u/{seen.user_id}/team"
        try:
            seen, message = _act(request, form, action)
        except IrisUsageError as exc:
            return back(request, seen, where, f"Not done: {exc}")
        return back(request, seen, where, message)

    return handle


def routes() -> list[Route]:
    return [
        Route("/u/{user}/team", page(team_page), methods=["GET"]),
        Route("/u/{user}/team/decide", page(_handler("decide")), methods=["POST"]),
        Route("/u/{user}/team/skill", page(_handler("skill")), methods=["POST"]),
        Route("/u/{user}/team/add", page(_handler("add")), methods=["POST"]),
        Route("/u/{user}/team/leave", page(_handler("leave")), methods=["POST"]),
    ]
