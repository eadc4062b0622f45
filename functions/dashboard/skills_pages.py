"""Skills: the list with usage counts, a skill's files, its version history with diffs, and
rollback; skill writes waiting for confirmation; sharing one's own skill with a team."""

from __future__ import annotations

import itertools

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.diffs import file_diff, text_of
from core.errors import IrisUsageError, NotFound
from core.skills import quarantine
from core.skills.library import SkillLibrary
from functions.dashboard.guard import back, form_checked, notice, own, runtime
from functions.dashboard.web import page, render

MAX_SHOWN_BYTES = 200_000


def _library(request: Request) -> SkillLibrary:
    rt = runtime(request)
    return SkillLibrary(rt.store, rt.settings)


def skills_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    library = _library(request)
    return render(request, "skills.html", viewer=seen, notice=notice(request, seen),
                  skills=library.entries(seen.user_id, include_archived=True),
                  held=runtime(request).store.held_writes.pending(seen.user_id, "skill"),
                  quarantined=quarantine.pending(library, seen.user_id))


def skill_page(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    library = _library(request)
    name = request.path_params["name"]
    snapshot = library.snapshot(seen.user_id, name)
    chosen = request.query_params.get("file") or "SKILL.md"
    if chosen not in snapshot.paths:
        raise NotFound(f"skill {name!r} has no file {chosen!r}")
    size = snapshot.sizes.get(chosen, 0)
    shown = text_of(snapshot.data(chosen)) if size <= MAX_SHOWN_BYTES else \
        f"(too large to show here: {size:,} bytes)"
    versions = list(reversed(library.versions(seen.user_id, name)))
    diffs = {}
    if len(versions) >= 2:
        for newer, older in itertools.pairwise(versions):
            diffs[newer.version] = _diff(library, seen.user_id, name, older.version,
                                         newer.version)
    entry = snapshot.entry
    own_skill = not entry.bundled and entry.team_id is None and entry.status != "archived"
    teams = [t.name for t, _ in library.store.teams.of_user(seen.user_id)] if own_skill else []
    return render(request, "skill.html", viewer=seen, notice=notice(request, seen),
                  skill=entry, paths=snapshot.paths, chosen=chosen, shown=shown,
                  versions=versions, diffs=diffs, head=versions[0].version if versions else None,
                  teams=teams)


def _diff(library: SkillLibrary, user_id: str, name: str, old: int,
          new: int) -> list[tuple[str, str]]:
    before = library.snapshot(user_id, name, old)
    after = library.snapshot(user_id, name, new)
    lines: list[tuple[str, str]] = []
    for path in sorted(set(before.paths) | set(after.paths)):
        if before.shas.get(path) == after.shas.get(path):
            continue
        lines.append(("ctx", f"── {path}"))
        lines.extend(file_diff(
            text_of(before.data(path)) if path in before.shas else "",
            text_of(after.data(path)) if path in after.shas else "", path))
    return lines


def rollback(request: Request, form: FormData | None) -> Response:
    seen = own(request)
    form_checked(request, seen, form)
    assert form is not None
    name = request.path_params["name"]
    version = str(form.get("version") or "")
    written = _library(request).rollback(seen.user_id, name,
                                         int(version) if version.isdigit() else None)
    return back(request, seen, f"/u/{seen.user_id}/skills/{name}",
                f"Rolled back: {name} is now version {written.entry.version}.")


def share(request: Request, form: FormData | None) -> Response:
    """Propose the viewer's own skill to one of their teams (``/skills share NAME TEAM``)."""
    from core.teams import skills as team_skills

    seen = own(request)
    form_checked(request, seen, form)
    assert form is not None
    name = request.path_params["name"]
    library = _library(request)
    where = f"/u/{seen.user_id}/skills/{name}"
    team = str(form.get("team") or "").strip()[:200] or None
    try:
        message = team_skills.share(library, seen.user_id, team, name)
    except IrisUsageError as exc:
        if library.find(seen.user_id, name) is None:  # no page to go back to
            where = f"/u/{seen.user_id}/skills"
        return back(request, seen, where, f"Not shared: {exc}")
    return back(request, seen, where, message)


def routes() -> list[Route]:
    return [
        Route("/u/{user}/skills", page(skills_page), methods=["GET"]),
        Route("/u/{user}/skills/{name}", page(skill_page), methods=["GET"]),
        Route("/u/{user}/skills/{name}/rollback", page(rollback), methods=["POST"]),
        Route("/u/{user}/skills/{name}/share", page(share), methods=["POST"]),
    ]
