"""A fake Google Chat: it signs interaction events as Chat does and answers Iris' calls in
Google's shapes.

Reference: Google Chat developer docs "Verify requests from Google Chat" (a bearer JWT: for the
project-number audience issued by ``chat@system.gserviceaccount.com`` with that account's keys
at ``/service_accounts/v1/jwk/chat@system.gserviceaccount.com``; for the URL audience a Google
ID token, issuer ``https://accounts.google.com``, ``email`` the Chat account, keys at
``/oauth2/v3/certs``), "Event objects" (``MESSAGE``/``CARD_CLICKED``, ``message.name``,
``argumentText``, ``space.spaceType``), the Chat API's ``spaces.messages.create`` (``POST
/v1/{parent=spaces/*}/messages``, ``messageReplyOption``, ``text`` up to 4,096 characters,
``cardsV2``; errors as ``{"error": {"code", "message", "status"}}``); and Google's OAuth 2.0
token endpoint's JWT bearer grant (RFC 7523: ``assertion`` signed by the service account's key,
``aud`` the token URI; errors ``{"error", "error_description"}``).

``GET /v1/media/{resourceName}?alt=media`` (``media.download``, app token) serves what
``upload(...)`` put in a message's ``attachment``. ``event(text)`` / ``click(...)`` build
events, ``headers(...)`` the bearer Chat would send; ``service_account()`` the JSON key file
of a service account whose public key the token endpoint checks assertions against.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

CHAT_ACCOUNT = "chat@system.gserviceaccount.com"
PROJECT_NUMBER = "123456789012"
TEXT_LIMIT = 4096
SCOPE = "https://www.googleapis.com/auth/chat.bot"


def _error(status: int, state: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": status, "message": message, "status": state}},
                        status_code=status)


def _jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, Any]:
    return {**jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True),
            "kid": kid, "alg": "RS256", "use": "sig"}


class FakeGoogleChat:
    def __init__(self) -> None:
        self.url = ""
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._chat_key = ("chat-" + secrets.token_hex(6),
                          rsa.generate_private_key(public_exponent=65537, key_size=2048))
        self._google_key = ("google-" + secrets.token_hex(6),
                            rsa.generate_private_key(public_exponent=65537, key_size=2048))
        self._account_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.account_email = "iris-bot@iris-project.iam.gserviceaccount.com"
        self.tokens: set[str] = set()
        self.sent: dict[str, list[dict[str, Any]]] = {}
        self.log: list[str] = []  # every text sent, in the order received
        self._rate_limits = 0
        self.app = Starlette(routes=[
            Route(f"/service_accounts/v1/jwk/{CHAT_ACCOUNT}", self._chat_jwks),
            Route("/oauth2/v3/certs", self._google_jwks),
            Route("/token", self._token, methods=["POST"]),
            Route("/v1/spaces/{space}/messages", self._create, methods=["POST"]),
            Route("/v1/media/{resource}", self._media),
        ])
        self.uploads: dict[str, tuple[bytes, str]] = {}

    # --- configuration -------------------------------------------------------------------
    def service_account(self) -> str:
        pem = self._account_key.private_bytes(serialization.Encoding.PEM,
                                              serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()).decode()
        return json.dumps({"type": "service_account", "project_id": "iris-project",
                           "private_key_id": "k1", "private_key": pem,
                           "client_email": self.account_email, "client_id": "1001",
                           "token_uri": f"{self.url}/token"})

    def env(self, audience: str = PROJECT_NUMBER) -> dict[str, str]:
        certs = "/oauth2/v3/certs" if audience.startswith("https://") else \
            f"/service_accounts/v1/jwk/{CHAT_ACCOUNT}"
        return {"IRIS_GOOGLECHAT_AUDIENCE": audience,
                "IRIS_GOOGLECHAT_SERVICE_ACCOUNT": self.service_account(),
                "IRIS_GOOGLECHAT_CERTS_URL": f"{self.url}{certs}",
                "IRIS_GOOGLECHAT_API_BASE": f"{self.url}/v1", "IRIS_GOOGLECHAT_ACCESS": "open"}

    # --- Chat's side: events and their tokens --------------------------------------------
    def event(self, text: str, *, user: str = "users/1001", name: str = "Ada",
              space: str = "spaces/AAAAdm-ada", dm: bool = True,
              message_id: str | None = None,
              attachments: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        number = next(self._ids)
        message_name = f"{space}/messages/{message_id or f'm{number:05d}.m{number:05d}'}"
        person = {"name": user, "displayName": name, "type": "HUMAN"}
        room = {"name": space, "type": "DM" if dm else "ROOM",
                "spaceType": "DIRECT_MESSAGE" if dm else "SPACE",
                **({"singleUserBotDm": True} if dm else {"displayName": "Team room"})}
        message: dict[str, Any] = {"name": message_name, "sender": person, "text": text,
                                   "thread": {"name": f"{space}/threads/t{number:05d}"},
                                   "space": room, "createTime": "2026-11-28T12:00:00Z"}
        if attachments:
            message["attachment"] = attachments
        if not dm and text.startswith("/"):  # a registered slash command
            rest = text.partition(" ")[2]
            message["slashCommand"] = {"commandId": "1"}
            message["argumentText"] = f" {rest}" if rest else ""
        elif not dm:
            message["text"] = f"@Iris {text}"
            message["argumentText"] = f" {text}"
        return {"type": "MESSAGE", "eventTime": "2026-11-28T12:00:00Z", "message": message,
                "user": person, "space": room, "common": {"userLocale": "en",
                                                          "hostApp": "CHAT"}}

    def upload(self, data: bytes, content_type: str, name: str) -> dict[str, Any]:
        """A file the person attached: the message's ``attachment`` entry for it."""
        resource = "ClxGaWxl" + secrets.token_urlsafe(12).replace("-", "A").replace("_", "B")
        with self._lock:
            self.uploads[resource] = (data, content_type)
        return {"name": f"spaces/x/messages/y/attachments/{resource}", "contentName": name,
                "contentType": content_type, "source": "UPLOADED_CONTENT",
                "attachmentDataRef": {"resourceName": resource}}

    def click(self, action: dict[str, Any], **where: Any) -> dict[str, Any]:
        """The ``CARD_CLICKED`` event of a press of a button whose ``onClick.action`` is
        ``action``."""
        event = self.event("", **where)
        event["type"] = "CARD_CLICKED"
        event["action"] = {"actionMethodName": action["function"],
                           "parameters": action.get("parameters", [])}
        event["common"]["invokedFunction"] = action["function"]
        return event

    def token(self, *, audience: str = PROJECT_NUMBER, now: float | None = None,
              lifetime: float = 3600, issuer: str | None = None, email: str = CHAT_ACCOUNT,
              kid: str | None = None) -> str:
        at = time.time() if now is None else now
        by_url = audience.startswith("https://")
        chosen, key = self._google_key if by_url else self._chat_key
        claims: dict[str, Any] = {"iss": issuer or ("https://accounts.google.com" if by_url
                                                    else CHAT_ACCOUNT),
                                  "aud": audience, "iat": int(at), "exp": int(at + lifetime)}
        if by_url:
            claims.update(email=email, email_verified=True, sub="113000000000000000000")
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid or chosen})

    def headers(self, **claims: Any) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(**claims)}",
                "Content-Type": "application/json"}

    # --- what Iris sent ------------------------------------------------------------------
    def messages(self, space: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.sent.get(space, []))

    def texts(self, space: str) -> list[str]:
        return [m["text"] for m in self.messages(space)]

    def rate_limit_next(self, count: int = 1) -> None:
        with self._lock:
            self._rate_limits += count

    # --- the endpoints -------------------------------------------------------------------
    async def _chat_jwks(self, request: Request) -> JSONResponse:
        return JSONResponse({"keys": [_jwk(self._chat_key[1], self._chat_key[0])]})

    async def _google_jwks(self, request: Request) -> JSONResponse:
        return JSONResponse({"keys": [_jwk(self._google_key[1], self._google_key[0])]})

    async def _token(self, request: Request) -> JSONResponse:
        form = await request.form()
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return JSONResponse({"error": "unsupported_grant_type",
                                 "error_description": "Invalid grant_type"}, status_code=400)
        try:
            claims = jwt.decode(str(form.get("assertion", "")),
                                self._account_key.public_key(), algorithms=["RS256"],
                                audience=f"{self.url}/token")
        except jwt.PyJWTError:
            return JSONResponse({"error": "invalid_grant",
                                 "error_description": "Invalid JWT Signature."},
                                status_code=400)
        if claims.get("iss") != self.account_email or claims.get("scope") != SCOPE:
            return JSONResponse({"error": "invalid_scope", "error_description":
                                 "Invalid OAuth scope or ID token audience provided."},
                                status_code=400)
        token = "ya29." + secrets.token_urlsafe(24)
        with self._lock:
            self.tokens.add(token)
        return JSONResponse({"access_token": token, "expires_in": 3599,
                             "token_type": "Bearer"})

    async def _media(self, request: Request) -> Response:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        with self._lock:
            known = scheme == "Bearer" and token in self.tokens
            found = self.uploads.get(request.path_params["resource"])
        if not known:
            return _error(401, "UNAUTHENTICATED", "Request had invalid authentication "
                          "credentials.")
        if request.query_params.get("alt") != "media" or found is None:
            return _error(404, "NOT_FOUND", "Requested entity was not found.")
        return Response(found[0], media_type=found[1])

    async def _create(self, request: Request) -> JSONResponse:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        with self._lock:
            known = scheme == "Bearer" and token in self.tokens
            limited = self._rate_limits > 0
            if limited:
                self._rate_limits -= 1
        if not known:
            return _error(401, "UNAUTHENTICATED", "Request had invalid authentication "
                          "credentials. Expected OAuth 2 access token.")
        if limited:
            return _error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric "
                          "'Write requests' of service 'chat.googleapis.com'.")
        body = await request.json()
        text = body.get("text", "") if isinstance(body, dict) else ""
        if not isinstance(text, str) or len(text) > TEXT_LIMIT:
            return _error(400, "INVALID_ARGUMENT", "Message text is too long.")
        space = f"spaces/{request.path_params['space']}"
        name = f"{space}/messages/iris{next(self._ids):05d}"
        thread = body.get("thread", {}).get("name") if isinstance(body.get("thread"),
                                                                  dict) else None
        with self._lock:
            self.sent.setdefault(space, []).append({
                "name": name, "text": text, "thread": thread,
                "replyOption": request.query_params.get("messageReplyOption"),
                "cardsV2": body.get("cardsV2", [])})
            self.log.append(text)
        return JSONResponse({"name": name, "text": text, "thread": {"name": thread}})
