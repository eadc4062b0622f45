"""``/ui/signin`` (a link's landing page and its button), ``/ui/logout``, ``/ui/`` (home)."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from core.dashboard.signin import SESSION_SECONDS, LinkRefused, redeem, revoke
from functions.dashboard.guard import COOKIE, form_checked, runtime, same_origin, secure, viewer
from functions.dashboard.web import page, render


def landing(request: Request, form: FormData | None) -> Response:
    """Opening a link spends nothing (chat apps fetch links to preview them): the button
    below does."""
    token = request.query_params.get("t", "")
    return render(request, "signin.html", token=token, refused=None)


def sign_in(request: Request, form: FormData | None) -> Response:
    assert form is not None
    token = str(form.get("t") or "")
    if not same_origin(request):
        raise HTTPException(403, "sign-in must come from this site's own page")
    try:
        opened = redeem(runtime(request).store, token,
                        user_agent=request.headers.get("user-agent"))
    except LinkRefused as exc:
        return render(request, "signin.html", status=400, token="", refused=str(exc))
    base = request.scope.get("root_path", "").rstrip("/")
    response = RedirectResponse(f"{base}/", status_code=303)
    response.set_cookie(COOKIE, opened.token, max_age=SESSION_SECONDS, path=base or "/",
                        httponly=True, samesite="strict", secure=secure(request))
    return response


def log_out(request: Request, form: FormData | None) -> Response:
    seen = viewer(request)
    form_checked(request, seen, form)
    revoke(runtime(request).store, seen.session.id, user_id=seen.user_id)
    base = request.scope.get("root_path", "").rstrip("/")
    response = render(request, "signed_out.html")
    response.delete_cookie(COOKIE, path=base or "/", httponly=True, samesite="strict",
                           secure=secure(request))
    return response


def home(request: Request, form: FormData | None) -> Response:
    seen = viewer(request)
    base = request.scope.get("root_path", "").rstrip("/")
    return RedirectResponse(f"{base}/u/{seen.user_id}/chat", status_code=303)


def routes() -> list[Route]:
    return [
        Route("/", page(home), methods=["GET"]),
        Route("/signin", page(landing), methods=["GET"]),
        Route("/signin", page(sign_in), methods=["POST"]),
        Route("/logout", page(log_out), methods=["POST"]),
    ]
