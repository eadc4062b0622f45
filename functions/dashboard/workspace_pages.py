"""Workspace: browse and download the files of the user's sandbox, read-only. A file is always
a download (never shown as a page of this site), and only paths inside the workspace are
asked for."""

from __future__ import annotations

from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from core.dashboard.workspace import MAX_DOWNLOAD_BYTES, checked_path, crumbs, parent_and_name
from core.errors import IrisUsageError
from functions.dashboard.guard import Viewer, own, runtime
from functions.dashboard.web import render


async def _checked(request: Request) -> tuple[Viewer, str]:
    seen = await run_in_threadpool(own, request)
    try:
        return seen, checked_path(request.query_params.get("path"))
    except IrisUsageError as exc:
        raise HTTPException(400, str(exc)) from None


async def workspace_page(request: Request) -> Response:
    from sandboxes import SandboxError

    seen, path = await _checked(request)
    workspaces = runtime(request).services.workspaces
    problem, entries = None, []
    try:
        async with workspaces.use(seen.user_id) as box:
            entries = sorted(await box.list_dir(path), key=lambda e: (not e.is_dir, e.name))
    except SandboxError as exc:
        problem = str(exc)
    finally:
        await workspaces.settle(seen.user_id)
    prefix = "" if path == "." else f"{path}/"
    return render(request, "workspace.html", viewer=seen, crumbs=crumbs(path),
                  entries=[(e, prefix + e.name) for e in entries], problem=problem,
                  limit=MAX_DOWNLOAD_BYTES)


async def download(request: Request) -> Response:
    from sandboxes import FileTooLarge, LinkRefused, NotARegularFile, SandboxError

    seen, path = await _checked(request)
    _, name = parent_and_name(path)
    workspaces = runtime(request).services.workspaces
    try:
        async with workspaces.use(seen.user_id) as box:
            data = await box.read_file(path, max_bytes=MAX_DOWNLOAD_BYTES)
    except FileTooLarge:
        raise HTTPException(413, "this file is too large to download here") from None
    except (NotARegularFile, LinkRefused) as exc:
        raise HTTPException(400, f"only regular files can be downloaded: {exc}") from None
    except SandboxError as exc:
        raise HTTPException(404, str(exc)) from None
    finally:
        await workspaces.settle(seen.user_id)
    return Response(data, media_type="application/octet-stream", headers={
        "content-disposition": f"attachment; filename*=UTF-8''{quote(name)}"})


def routes() -> list[Route]:
    return [
        Route("/u/{user}/workspace", workspace_page, methods=["GET"]),
        Route("/u/{user}/workspace/file", download, methods=["GET"]),
    ]
