"""A fake WhatsApp Cloud API (Meta's Graph API) for tests that drive Iris' real sender over HTTP,
answering in Meta's shapes: ``POST /{version}/{phone_number_id}/messages`` →
``{"messaging_product": "whatsapp", "contacts": [...], "messages": [{"id": "wamid…"}]}``, errors
as ``{"error": {"message", "type", "code", "error_data": {"details"}, "fbtrace_id"}}``, media as
``GET /{version}/{media_id}`` → ``{"url", "mime_type", "sha256", "file_size", "id"}`` and the URL's
bytes behind the same bearer token. It also builds and signs webhook payloads as Meta sends them.

::

    wa = FakeWhatsApp(token="t", phone_number_id="106540352242922")
    with serve(wa.app) as server:   # IRIS_WHATSAPP_API_BASE = f"{server.url}/v23.0"
        ...
    wa.sent("4915112345678")       # the text bodies Iris sent to that number

Media people send: ``media_message`` registers the bytes and builds the webhook's ``image`` or
``document`` object (``id``, ``mime_type``, ``sha256`` base64, ``filename``, ``caption``).
Interactive messages (``type: interactive``: reply buttons or a list) are checked against the
Cloud API's limits (``interactive_problem``) and, like text, refused outside the window;
``press_payload`` builds the webhook of a person pressing one. Template messages
(``type: template``) are checked against ``approve_template`` as Meta checks
them (name and language known, body parameter count, no newlines or tabs in a parameter) and are
the one kind of message that goes out while a number's window is closed. ``tap_payload`` builds
the webhook of a person tapping one of a sent template's quick-reply buttons (a message of type
``button`` whose ``context.id`` is the template's wamid).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

PHONE_NUMBER_ID = "106540352242922"
DISPLAY_NUMBER = "15550783881"
WABA_ID = "102290129340398"
TEXT_LIMIT = 4096


def _length(value: object, limit: int) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= limit


def interactive_problem(interactive: Any) -> str | None:
    """What the Cloud API says about an ``interactive`` object of type ``button`` (1-3 reply
    buttons: id up to 256 characters, title up to 20, both distinct) or ``list`` (a button text
    up to 20 characters, 1-10 sections, at most 10 rows in all: id up to 200 characters, title
    up to 24, description up to 72); None when it is valid. Body text: 1-1024 characters."""
    if not isinstance(interactive, dict):
        return "interactive is required"
    if not _length((interactive.get("body") or {}).get("text"), 1024):
        return "interactive.body.text is required and must be at most 1024 characters"
    action = interactive.get("action") or {}
    if interactive.get("type") == "button":
        buttons = action.get("buttons")
        if not isinstance(buttons, list) or not 1 <= len(buttons) <= 3:
            return "interactive.action.buttons must have 1 to 3 buttons"
        replies = [b.get("reply") or {} for b in buttons if b.get("type") == "reply"]
        if len(replies) != len(buttons):
            return "interactive.action.buttons[].type must be reply"
        for reply in replies:
            if not _length(reply.get("id"), 256) or not _length(reply.get("title"), 20):
                return "button id (max 256) and title (max 20 characters) are required"
        for key in ("id", "title"):
            if len({r[key] for r in replies}) != len(replies):
                return f"button {key}s must be unique"
        return None
    if interactive.get("type") == "list":
        sections = action.get("sections")
        if not _length(action.get("button"), 20):
            return "interactive.action.button is required and must be at most 20 characters"
        if not isinstance(sections, list) or not 1 <= len(sections) <= 10:
            return "interactive.action.sections must have 1 to 10 sections"
        if len(sections) > 1 and not all(_length(x.get("title"), 24) for x in sections):
            return "every section needs a title when there are several"
        rows = [row for section in sections for row in section.get("rows") or []]
        if not 1 <= len(rows) <= 10:
            return "a list has 1 to 10 rows in all"
        for row in rows:
            if not _length(row.get("id"), 200) or not _length(row.get("title"), 24):
                return "row id (max 200) and title (max 24 characters) are required"
            if "description" in row and not _length(row["description"], 72):
                return "row description must be at most 72 characters"
        if len({row["id"] for row in rows}) != len(rows):
            return "row ids must be unique"
        return None
    return f"interactive.type {interactive.get('type')!r} is not modelled by this fake"


def graph_error(status: int, code: int, message: str, details: str | None = None,
                kind: str = "OAuthException") -> JSONResponse:
    error: dict[str, Any] = {"message": message, "type": kind, "code": code,
                             "fbtrace_id": "AazF1fakeTraceId"}
    if details:
        error["error_data"] = {"messaging_product": "whatsapp", "details": details}
    return JSONResponse({"error": error}, status_code=status)


@dataclass
class _Failure:
    times: int
    status: int
    code: int
    message: str


class FakeWhatsApp:
    def __init__(self, *, token: str, phone_number_id: str = PHONE_NUMBER_ID) -> None:
        self.token = token
        self.phone_number_id = phone_number_id
        self.media: dict[str, tuple[bytes, str]] = {}
        self.closed_windows: set[str] = set()
        self._lock = threading.Lock()
        self._sent: list[dict[str, Any]] = []
        self._failures: list[_Failure] = []
        self._ids = itertools.count(1)
        self._inbound = itertools.count(1)
        self.requests: list[tuple[str, str]] = []
        self.templates: dict[tuple[str, str], int] = {}  # (name, language) → body parameters
        self.quick_replies: dict[tuple[str, str], tuple[str, ...]] = {}  # their buttons
        self._template_gate: threading.Event | None = None
        self.app = Starlette(routes=[
            Route("/_media/{media_id}", self._media_bytes, methods=["GET"]),
            Route("/{version}/{phone}/messages", self._messages, methods=["POST"]),
            Route("/{version}/{media_id}", self._media_info, methods=["GET"]),
        ])

    # test controls

    def fail_next(self, times: int = 1, *, status: int = 429, code: int = 130429,
                  message: str = "(#130429) Rate limit hit") -> None:
        with self._lock:
            self._failures.append(_Failure(times, status, code, message))

    def add_media(self, media_id: str, data: bytes, mime_type: str = "audio/ogg") -> None:
        self.media[media_id] = (data, mime_type)

    def approve_template(self, name: str, language: str = "en", body_parameters: int = 1,
                         quick_replies: tuple[str, ...] = ()) -> None:
        """A template Meta approved, with ``quick_replies``: its quick-reply buttons' labels
        (static buttons, defined with the template, not in the send request)."""
        self.templates[(name, language)] = body_parameters
        self.quick_replies[(name, language)] = quick_replies

    def pause_templates(self) -> threading.Event:
        """Record templates as they arrive but answer them only once the returned event is
        set: the person can write back while Iris still waits for the template's answer."""
        self._template_gate = threading.Event()
        return self._template_gate

    def open_window(self, wa_id: str) -> None:
        self.closed_windows.discard(wa_id)

    def close_window(self, wa_id: str) -> None:
        """Answer sends to ``wa_id`` as Meta does outside the customer-service window."""
        self.closed_windows.add(wa_id)

    # inspection

    def sent(self, to: str | None = None) -> list[str]:
        """Text bodies sent (templates are in ``templates_sent``)."""
        with self._lock:
            return [m["text"]["body"] for m in self._sent
                    if m.get("type") == "text" and (to is None or m["to"] == to)]

    def interactive_sent(self, to: str | None = None) -> list[dict[str, Any]]:
        """Interactive messages sent (buttons and lists), with their ``id`` (wamid)."""
        with self._lock:
            return [{**m["interactive"], "id": m["id"]} for m in self._sent
                    if m.get("type") == "interactive" and (to is None or m["to"] == to)]

    def templates_sent(self, to: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [m["template"] for m in self._sent
                    if m.get("type") == "template" and (to is None or m["to"] == to)]

    def template_ids(self, to: str | None = None) -> list[str]:
        """The wamids of the templates sent, in order."""
        with self._lock:
            return [m["id"] for m in self._sent
                    if m.get("type") == "template" and (to is None or m["to"] == to)]

    def sent_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._sent)

    # webhook payloads, as Meta posts them

    def message_payload(self, text: str | None, *, wa_id: str = "4915112345678",
                        name: str = "Ada", message_id: str | None = None,
                        kind: str = "text", media: dict[str, Any] | None = None,
                        phone_number_id: str | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {
            "from": wa_id, "id": message_id or self.next_wamid(),
            "timestamp": str(int(time.time())), "type": kind,
        }
        if kind == "text":
            msg["text"] = {"body": text or ""}
        else:
            msg[kind] = dict(media or {})
        return self._envelope({
            "contacts": [{"profile": {"name": name}, "wa_id": wa_id}], "messages": [msg],
        }, phone_number_id)

    def press_payload(self, sent: dict[str, Any], reply_id: str, *,
                      wa_id: str = "4915112345678", name: str = "Ada",
                      message_id: str | None = None) -> dict[str, Any]:
        """A person's press of the button or list row ``reply_id`` of the interactive message
        ``sent`` (from ``interactive_sent``): a message of type ``interactive`` whose
        ``context`` names the message pressed."""
        if sent["type"] == "button":
            options = [b["reply"] for b in sent["action"]["buttons"]]
            kind = "button_reply"
        else:
            options = [r for s in sent["action"]["sections"] for r in s["rows"]]
            kind = "list_reply"
        chosen = next((o for o in options if o["id"] == reply_id), {"id": reply_id,
                                                                    "title": "?"})
        reply = {"id": chosen["id"], "title": chosen["title"]}
        if kind == "list_reply" and chosen.get("description"):
            reply["description"] = chosen["description"]
        msg = {"context": {"from": DISPLAY_NUMBER, "id": sent["id"]}, "from": wa_id,
               "id": message_id or self.next_wamid(), "timestamp": str(int(time.time())),
               "type": "interactive", "interactive": {"type": kind, kind: reply}}
        return self._envelope({"contacts": [{"profile": {"name": name}, "wa_id": wa_id}],
                               "messages": [msg]}, None)

    def tap_payload(self, template_id: str, label: str, *, wa_id: str = "4915112345678",
                    name: str = "Ada", message_id: str | None = None) -> dict[str, Any]:
        """A person's tap on the quick-reply button ``label`` of the template sent as
        ``template_id``, as Meta's messages webhook reports it: type ``button``, ``button``
        with ``payload`` and ``text`` (both the label for a static button), ``context`` naming
        the template. A label the sent template has no button for is refused here (Meta
        cannot send such a tap); an id the fake never sent is built as given (a forgery)."""
        with self._lock:
            sent = next((m for m in self._sent if m["id"] == template_id), None)
        if sent is not None:
            template = sent.get("template") or {}
            key = (template.get("name"), (template.get("language") or {}).get("code"))
            if label not in self.quick_replies.get(key, ()):  # type: ignore[arg-type]
                raise ValueError(f"template {key} has no quick-reply button {label!r}")
        msg = {"context": {"from": DISPLAY_NUMBER, "id": template_id}, "from": wa_id,
               "id": message_id or self.next_wamid(), "timestamp": str(int(time.time())),
               "type": "button", "button": {"payload": label, "text": label}}
        return self._envelope({"contacts": [{"profile": {"name": name}, "wa_id": wa_id}],
                               "messages": [msg]}, None)

    def media_message(self, kind: str, media_id: str, data: bytes, mime_type: str, *,
                      filename: str | None = None, caption: str | None = None,
                      **payload: Any) -> dict[str, Any]:
        """A webhook payload with an ``image`` or ``document`` the fake serves."""
        self.add_media(media_id, data, mime_type)
        media: dict[str, Any] = {"mime_type": mime_type, "id": media_id,
                                 "sha256": base64.b64encode(hashlib.sha256(data).digest()).decode()}
        if filename is not None:
            media["filename"] = filename
        if caption is not None:
            media["caption"] = caption
        return self.message_payload(None, kind=kind, media=media, **payload)

    def status_payload(self, message_id: str, status: str = "delivered",
                       wa_id: str = "4915112345678") -> dict[str, Any]:
        return self._envelope({"statuses": [{
            "id": message_id, "status": status, "timestamp": str(int(time.time())),
            "recipient_id": wa_id,
            "conversation": {"id": "c0ffee", "origin": {"type": "service"}},
            "pricing": {"billable": True, "pricing_model": "PMP", "category": "service"},
        }]}, None)

    def _envelope(self, value: dict[str, Any], phone_number_id: str | None) -> dict[str, Any]:
        return {"object": "whatsapp_business_account", "entry": [{"id": WABA_ID, "changes": [{
            "value": {"messaging_product": "whatsapp", "metadata": {
                "display_phone_number": DISPLAY_NUMBER,
                "phone_number_id": phone_number_id or self.phone_number_id}, **value},
            "field": "messages"}]}]}

    def next_wamid(self) -> str:
        with self._lock:
            n = next(self._inbound)
        return f"wamid.HBgLNDkxNTExMjM0NTY3OBUCABIYFjNFQjA{n:012d}"

    @staticmethod
    def sign(body: bytes, app_secret: str) -> dict[str, str]:
        digest = hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()
        return {"X-Hub-Signature-256": f"sha256={digest}"}

    # the Graph API

    def _authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.token}"

    async def _messages(self, request: Request) -> Response:
        phone = request.path_params["phone"]
        with self._lock:
            self.requests.append(("POST", request.url.path))
        if not self._authorized(request):
            return graph_error(401, 190, "Invalid OAuth access token - Cannot parse access token")
        if phone != self.phone_number_id:
            return graph_error(400, 100, f"Unsupported post request. Object with ID '{phone}' "
                               "does not exist", kind="GraphMethodException")
        try:
            body = json.loads(await request.body())
        except ValueError:
            return graph_error(400, 100, "(#100) Invalid JSON")
        if body.get("messaging_product") != "whatsapp":
            return graph_error(400, 100, "(#100) The parameter messaging_product is required.")
        to = str(body.get("to") or "")
        if body.get("type") == "template":
            answer = self._template(to, body)
            if self._template_gate is not None:
                await asyncio.to_thread(self._template_gate.wait)
            return answer
        if body.get("type") == "interactive":
            problem = interactive_problem(body.get("interactive"))
            if problem is not None:
                return graph_error(400, 131009, "(#131009) Parameter value is not valid",
                                   details=problem)
        else:
            text = (body.get("text") or {}).get("body")
            if body.get("type") != "text" or not isinstance(text, str) or not text:
                return graph_error(400, 100, "(#100) Param text['body'] is required")
            if len(text) > TEXT_LIMIT:
                return graph_error(400, 100, "(#100) Param text['body'] must be at most 4096 "
                                   "characters long.")
        with self._lock:
            failure = self._failures[0] if self._failures else None
            if failure is not None:
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.pop(0)
        if failure is not None:
            return graph_error(failure.status, failure.code, failure.message)
        if to in self.closed_windows:
            return graph_error(400, 131047, "Re-engagement message", details=(
                "Message failed to send because more than 24 hours have passed since the "
                "customer last replied to this number."))
        with self._lock:
            wamid = f"wamid.HBgLOUTGOING{next(self._ids):010d}"
            self._sent.append({**body, "id": wamid})
        return JSONResponse({"messaging_product": "whatsapp",
                             "contacts": [{"input": to, "wa_id": to}],
                             "messages": [{"id": wamid}]})

    def _template(self, to: str, body: dict[str, Any]) -> Response:
        template = body.get("template") or {}
        name = template.get("name")
        language = (template.get("language") or {}).get("code")
        if not isinstance(name, str) or not isinstance(language, str):
            return graph_error(400, 100, "(#100) Param template['name'] and "
                               "template['language']['code'] are required")
        expected = self.templates.get((name, language))
        if expected is None:
            return graph_error(404, 132001, "(#132001) Template name does not exist in the "
                               "translation", details=f"template name ({name}) does not exist "
                               f"in {language}")
        params = [p for c in template.get("components") or [] if c.get("type") == "body"
                  for p in c.get("parameters") or []]
        if len(params) != expected:
            return graph_error(400, 132000, "(#132000) Number of parameters does not match the "
                               "expected number of params", details=f"body: number of "
                               f"localizable_params ({len(params)}) does not match the expected "
                               f"number of params ({expected})")
        for param in params:
            text = param.get("text") if param.get("type") == "text" else None
            if not isinstance(text, str) or not text.strip():
                return graph_error(400, 100, "(#100) Invalid parameter")
            if "\n" in text or "\t" in text or "     " in text:
                return graph_error(400, 132018, "(#132018) There was an issue with the "
                                   "parameters in your template.", details="Param text cannot "
                                   "have new-line/tab characters or more than 4 consecutive "
                                   "spaces")
        with self._lock:
            wamid = f"wamid.HBgLOUTGOING{next(self._ids):010d}"
            self._sent.append({**body, "id": wamid})
        return JSONResponse({"messaging_product": "whatsapp",
                             "contacts": [{"input": to, "wa_id": to}],
                             "messages": [{"id": wamid, "message_status": "accepted"}]})

    async def _media_info(self, request: Request) -> Response:
        media_id = request.path_params["media_id"]
        if not self._authorized(request):
            return graph_error(401, 190, "Invalid OAuth access token - Cannot parse access token")
        if media_id not in self.media:
            return graph_error(400, 100, f"Unsupported get request. Object with ID "
                               f"'{media_id}' does not exist", kind="GraphMethodException")
        data, mime = self.media[media_id]
        base = str(request.base_url).rstrip("/")
        return JSONResponse({
            "messaging_product": "whatsapp", "url": f"{base}/_media/{media_id}",
            "mime_type": mime, "sha256": hashlib.sha256(data).hexdigest(),
            "file_size": len(data), "id": media_id,
        })

    async def _media_bytes(self, request: Request) -> Response:
        if not self._authorized(request):
            return Response(status_code=401)
        found = self.media.get(request.path_params["media_id"])
        if found is None:
            return Response(status_code=404)
        return Response(found[0], media_type=found[1])
