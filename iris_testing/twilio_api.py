"""A fake Twilio Messaging API for tests that drive Iris' real SMS sender over HTTP, answering in
Twilio's shapes (reference: twilio.com/docs/messaging/api/message-resource "Create a Message",
twilio.com/docs/usage/webhooks/webhooks-security, twilio.com/docs/api/errors):

- ``POST /2010-04-01/Accounts/{AccountSid}/Messages.json`` (form ``To``, ``From``, ``Body``;
  HTTP basic auth with the account SID and auth token) → ``201`` with the message resource
  (``sid`` ``SM…``, ``status: queued``, ``num_segments``…); errors as
  ``{"code", "message", "more_info", "status"}``: 20003 (authentication), 21211 (invalid To),
  21617 (body over 1,600 characters), 21602 (empty body), 20429 (rate limit, when injected).
- ``GET /2010-04-01/Accounts/{AccountSid}/Messages/{MessageSid}/Media/{MediaSid}`` → the bytes
  registered with ``add_media`` (basic auth; Twilio redirects to its media host, the fake
  serves the bytes directly).

It also builds incoming-message webhooks as Twilio posts them (``inbound``: form fields
``MessageSid``, ``AccountSid``, ``From``, ``To``, ``Body``, ``NumMedia``, ``MediaUrlN``,
``MediaContentTypeN``…) and signs them (``sign``: base64 HMAC-SHA1 of the URL followed by the
sorted parameters' names and values, keyed with the auth token).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import re
import threading
import uuid
from collections.abc import Sequence
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

ACCOUNT_SID = "AC" + "0123456789abcdef" * 2
IRIS_NUMBER = "+15005550006"
PERSON = "+15551234567"
BODY_LIMIT = 1600


def twilio_error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse(
        {
            "code": code,
            "message": message,
            "more_info": f"https://www.twilio.com/docs/errors/{code}",
            "status": status,
        },
        status_code=status,
    )


class FakeTwilio:
    def __init__(self, *, auth_token: str, account_sid: str = ACCOUNT_SID) -> None:
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.media: dict[str, tuple[bytes, str]] = {}
        self.base_url = ""  # set by the test once served: MediaUrl values point here
        self._lock = threading.Lock()
        self._sent: list[dict[str, str]] = []
        self._failures: list[tuple[int, int]] = []
        self._ids = itertools.count(1)
        self.app = Starlette(
            routes=[
                Route("/2010-04-01/Accounts/{sid}/Messages.json", self._create, methods=["POST"]),
                Route(
                    "/2010-04-01/Accounts/{sid}/Messages/{msg}/Media/{media}",
                    self._media,
                    methods=["GET"],
                ),
            ]
        )

    # test controls

    def fail_next(self, times: int = 1, *, status: int = 429, code: int = 20429) -> None:
        with self._lock:
            self._failures.extend([(status, code)] * times)

    def sent(self, to: str | None = None) -> list[str]:
        with self._lock:
            return [m["Body"] for m in self._sent if to is None or m["To"] == to]

    def add_media(self, data: bytes, content_type: str) -> str:
        """Registers an MMS attachment; returns its URL as Twilio puts it in ``MediaUrlN``."""
        msg, media = self._sid("MM"), self._sid("ME")
        path = f"/2010-04-01/Accounts/{self.account_sid}/Messages/{msg}/Media/{media}"
        self.media[path] = (data, content_type)
        return self.base_url + path

    def _sid(self, prefix: str) -> str:
        return prefix + uuid.uuid4().hex

    def inbound(
        self,
        body: str,
        *,
        sender: str = PERSON,
        sid: str | None = None,
        media: Sequence[tuple[str, str]] = (),
    ) -> dict[str, str]:
        """The form Twilio posts for an incoming message (``media``: (url, content type))."""
        form = {
            "ToCountry": "US",
            "SmsMessageSid": "",
            "NumMedia": str(len(media)),
            "MessageSid": sid or self._sid("SM" if not media else "MM"),
            "AccountSid": self.account_sid,
            "From": sender,
            "To": IRIS_NUMBER,
            "Body": body,
            "NumSegments": "1",
            "SmsStatus": "received",
            "ApiVersion": "2010-04-01",
        }
        form["SmsMessageSid"] = form["MessageSid"]
        for i, (url, kind) in enumerate(media):
            form[f"MediaUrl{i}"] = url
            form[f"MediaContentType{i}"] = kind
        return form

    @staticmethod
    def sign(url: str, form: dict[str, str], auth_token: str) -> dict[str, str]:
        data = url + "".join(k + v for k, v in sorted(form.items()))
        digest = hmac.new(auth_token.encode(), data.encode(), hashlib.sha1).digest()
        return {"X-Twilio-Signature": base64.b64encode(digest).decode()}

    # the API

    def _authorized(self, request: Request) -> bool:
        raw = f"{self.account_sid}:{self.auth_token}".encode()
        return request.headers.get("authorization") == "Basic " + base64.b64encode(raw).decode()

    async def _create(self, request: Request) -> Response:
        if request.path_params["sid"] != self.account_sid or not self._authorized(request):
            return twilio_error(401, 20003, "Authenticate")
        with self._lock:
            if self._failures:
                status, code = self._failures.pop(0)
                return twilio_error(status, code, "Too Many Requests")
        form = dict(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        to, body = form.get("To", ""), form.get("Body", "")
        if not re.fullmatch(r"\+[1-9]\d{4,14}", to):
            return twilio_error(400, 21211, f"The 'To' number {to} is not a valid phone number.")
        if not body:
            return twilio_error(400, 21602, "Message body is required.")
        if len(body) > BODY_LIMIT:
            return twilio_error(
                400, 21617, "The concatenated message body exceeds the 1600 character limit."
            )
        sid = self._sid("SM")
        with self._lock:
            self._sent.append({"To": to, "From": form.get("From", ""), "Body": body, "sid": sid})
        return JSONResponse(
            {
                "sid": sid,
                "account_sid": self.account_sid,
                "to": to,
                "from": form.get("From"),
                "body": body,
                "status": "queued",
                "direction": "outbound-api",
                "num_segments": "1",
                "num_media": "0",
                "api_version": "2010-04-01",
                "error_code": None,
                "error_message": None,
                "uri": f"/2010-04-01/Accounts/{self.account_sid}/Messages/{sid}.json",
            },
            status_code=201,
        )

    async def _media(self, request: Request) -> Response:
        if not self._authorized(request):
            return twilio_error(401, 20003, "Authenticate")
        found = self.media.get(request.url.path)
        if found is None:
            return twilio_error(404, 20404, "The requested resource was not found")
        data, kind = found
        return Response(data, media_type=kind)

    def request_count(self) -> int:
        with self._lock:
            return len(self._sent)


def sms_env(url: str, auth_token: str, public_url: str) -> dict[str, str]:
    return {
        "IRIS_TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "IRIS_TWILIO_AUTH_TOKEN": auth_token,
        "IRIS_TWILIO_FROM_NUMBER": IRIS_NUMBER,
        "IRIS_TWILIO_API_BASE": url,
        "IRIS_SMS_ACCESS": "open",
        "IRIS_PUBLIC_URL": public_url,
    }
