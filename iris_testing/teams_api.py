"""A fake Microsoft Teams (Bot Framework): it signs activities as the Bot Connector does and
answers Iris' calls in the Bot Framework's shapes.

Reference: "Authentication with the Bot Connector API" (learn.microsoft.com, bot-service/
rest-api/bot-framework-rest-connector-authentication) and the botframework-connector SDK's
``auth`` (JwtTokenExtractor, EndorsementsValidator, AuthenticationConstants); the Bot
Connector REST reference (``POST /v3/conversations/{conversationId}/activities[/{activityId}]``,
ResourceResponse ``{"id"}``, ErrorResponse ``{"error": {"code", "message"}}``, 429 with
``Retry-After``); the Microsoft identity platform's client-credentials grant
(``POST /{tenant}/oauth2/v2.0/token``, errors ``{"error", "error_description",
"error_codes"}``).

Served here, all on one loopback server:

- ``GET /v1/.well-known/openidconfiguration``: the OpenID metadata (issuer, ``jwks_uri``);
- ``GET /v1/.well-known/keys``: the JWKS, RSA keys with ``endorsements`` (channel ids);
- ``POST /botframework.com/oauth2/v2.0/token``: client credentials → ``access_token``;
- ``POST /teams/v3/conversations/{id}/activities[/{replyToId}]``: the connector
  (``service_url`` is ``{url}/teams/``), bearer token required.

- ``GET /teams/v3/attachments/{id}/views/original``: a pasted picture (bearer token);
- ``GET /files/{id}?tempauth=…``: a sent file's pre-authenticated ``downloadUrl``.

``activity(...)`` builds a message activity (``file(...)``, ``picture(...)`` its attachments),
``press(...)`` the one a card's Action.Submit sends, ``headers(activity)`` the
``Authorization`` the connector would send (RS256 JWT: ``iss`` ``https://api.botframework.com``,
``aud`` the app id, ``serviceurl``, ``nbf``/``exp`` around the given time). ``rotate()``
publishes a new signing key (and signs with it).
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from typing import Any
from urllib.parse import unquote

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

APP_ID = "3f2c1e8a-5b7d-4c9e-8a1f-0d6b2e4c7a91"
APP_PASSWORD = "teams-client-secret"
ISSUER = "https://api.botframework.com"
MAX_ACTIVITY_BYTES = 28_000  # Teams refuses messages over ~28 KB


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class FakeTeams:
    def __init__(self, app_id: str = APP_ID, app_password: str = APP_PASSWORD) -> None:
        self.app_id, self.app_password = app_id, app_password
        self.url = ""  # set once served: service URL and metadata derive from it
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._keys: list[tuple[str, rsa.RSAPrivateKey]] = []
        self.rotate()
        self.tokens: set[str] = set()
        self.token_requests = 0
        self.key_fetches = 0
        self.sent: dict[str, list[dict[str, Any]]] = {}
        self.log: list[str] = []  # every text sent, in the order received
        self._rate_limits = 0
        self.app = Starlette(routes=[
            Route("/v1/.well-known/openidconfiguration", self._metadata),
            Route("/v1/.well-known/keys", self._jwks),
            Route("/botframework.com/oauth2/v2.0/token", self._token, methods=["POST"]),
            Route("/teams/v3/conversations/{conversation}/activities", self._post,
                  methods=["POST"]),
            Route("/teams/v3/conversations/{conversation}/activities/{reply_to}", self._post,
                  methods=["POST"]),
            Route("/teams/v3/attachments/{item}/views/original", self._view),
            Route("/files/{item}", self._file),
        ])
        self.files: dict[str, bytes] = {}

    # --- what Iris is configured with ---------------------------------------------------
    @property
    def service_url(self) -> str:
        return f"{self.url}/teams/"

    def env(self) -> dict[str, str]:
        return {"IRIS_TEAMS_APP_ID": self.app_id, "IRIS_TEAMS_APP_PASSWORD": self.app_password,
                "IRIS_TEAMS_OPENID_URL": f"{self.url}/v1/.well-known/openidconfiguration",
                "IRIS_TEAMS_TOKEN_URL": f"{self.url}/botframework.com/oauth2/v2.0/token",
                "IRIS_TEAMS_SERVICE_URL": self.service_url, "IRIS_TEAMS_ACCESS": "open"}

    # --- the connector's side: activities and their tokens --------------------------------
    def rotate(self) -> str:
        kid = secrets.token_hex(8)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        with self._lock:
            self._keys.append((kid, key))
        return kid

    def activity(self, text: str, *, user: str = "29:1ada", name: str = "Ada",
                 conversation: str = "a:1personal-ada", kind: str = "personal",
                 value: Any = None, activity_id: str | None = None,
                 attachments: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        number = next(self._ids)
        body: dict[str, Any] = {
            "type": "message", "id": activity_id or f"1700000000{number:03d}",
            "timestamp": "2026-11-28T12:00:00.000Z", "serviceUrl": self.service_url,
            "channelId": "msteams", "from": {"id": user, "name": name,
                                             "aadObjectId": "00000000-0000-0000-0000-00000000ada1"},
            "conversation": {"id": conversation, "conversationType": kind,
                             "tenantId": "72f988bf-0000-0000-0000-000000000000",
                             **({"isGroup": True} if kind != "personal" else {})},
            "recipient": {"id": f"28:{self.app_id}", "name": "Iris"},
            "textFormat": "plain", "locale": "en-US",
            "channelData": {"tenant": {"id": "72f988bf-0000-0000-0000-000000000000"}},
        }
        if text:
            body["text"] = text
        if value is not None:
            body["value"] = value
        if attachments:
            body["attachments"] = attachments
        return body

    def file(self, data: bytes, name: str) -> dict[str, Any]:
        """A file sent in a personal chat: its ``file.download.info`` attachment, whose
        ``downloadUrl`` is pre-authenticated (``tempauth`` in the query, no header needed)."""
        item = secrets.token_hex(8)
        with self._lock:
            self.files[item] = data
        return {"contentType": "application/vnd.microsoft.teams.file.download.info",
                "contentUrl": f"https://contoso.sharepoint.com/personal/ada/{name}",
                "name": name, "content": {"downloadUrl": f"{self.url}/files/{item}?tempauth=x",
                                          "uniqueId": item, "fileType": name.rsplit(".")[-1]}}

    def picture(self, data: bytes) -> dict[str, Any]:
        """A picture pasted in the message: an ``image/*`` attachment at the connector, read
        with the bot's token."""
        item = "0-" + secrets.token_hex(8)
        with self._lock:
            self.files[item] = data
        return {"contentType": "image/*",
                "contentUrl": f"{self.service_url}v3/attachments/{item}/views/original"}

    def press(self, data: dict[str, Any], **where: Any) -> dict[str, Any]:
        """The activity a press of an ``Action.Submit`` sends: its ``data`` as ``value``."""
        return self.activity("", value=data, **where)

    def token(self, *, now: float | None = None, audience: str | None = None,
              service_url: str | None = None, issuer: str = ISSUER, lifetime: float = 3600,
              kid: str | None = None, algorithm: str = "RS256") -> str:
        at = time.time() if now is None else now
        claims = {"iss": issuer, "aud": audience or self.app_id,
                  "serviceurl": service_url or self.service_url,
                  "nbf": int(at) - 5, "exp": int(at + lifetime)}
        with self._lock:
            chosen, key = self._keys[-1]
        return jwt.encode(claims, key, algorithm=algorithm,
                          headers={"kid": kid or chosen, "typ": "JWT"})

    def headers(self, **claims: Any) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(**claims)}",
                "Content-Type": "application/json"}

    # --- what Iris sent -----------------------------------------------------------------
    def messages(self, conversation: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.sent.get(conversation, []))

    def texts(self, conversation: str) -> list[str]:
        return [m["text"] for m in self.messages(conversation)]

    def rate_limit_next(self, count: int = 1) -> None:
        with self._lock:
            self._rate_limits += count

    # --- the endpoints ------------------------------------------------------------------
    async def _metadata(self, request: Request) -> JSONResponse:
        return JSONResponse({"issuer": ISSUER, "authorization_endpoint":
                             "https://invalid.botframework.com",
                             "jwks_uri": f"{self.url}/v1/.well-known/keys",
                             "id_token_signing_alg_values_supported": ["RS256"],
                             "token_endpoint_auth_methods_supported": ["private_key_jwt"]})

    async def _jwks(self, request: Request) -> JSONResponse:
        with self._lock:
            self.key_fetches += 1
            keys = list(self._keys)
        published = []
        for kid, key in keys:
            jwk = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
            published.append({**jwk, "kid": kid, "use": "sig",
                              "endorsements": ["msteams", "webchat", "skype"]})
        return JSONResponse({"keys": published})

    async def _token(self, request: Request) -> JSONResponse:
        form = await request.form()
        with self._lock:
            self.token_requests += 1
        if form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type", "error_codes": [70003],
                                 "error_description": "AADSTS70003: The app requested an "
                                 "unsupported grant type."}, status_code=400)
        if form.get("client_id") != self.app_id or form.get("client_secret") != \
                self.app_password:
            return JSONResponse({"error": "invalid_client", "error_codes": [7000215],
                                 "error_description": "AADSTS7000215: Invalid client secret "
                                 "provided."}, status_code=401)
        if form.get("scope") != "https://api.botframework.com/.default":
            return JSONResponse({"error": "invalid_scope", "error_codes": [1002012],
                                 "error_description": "AADSTS1002012: The provided value "
                                 "for scope is not valid."}, status_code=400)
        token = secrets.token_urlsafe(24)
        with self._lock:
            self.tokens.add(token)
        return JSONResponse({"token_type": "Bearer", "expires_in": 3599,
                             "ext_expires_in": 3599, "access_token": token})

    async def _view(self, request: Request) -> Response:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        with self._lock:
            known = scheme == "Bearer" and token in self.tokens
            data = self.files.get(request.path_params["item"])
        if not known:
            return JSONResponse({"message": "Authorization has been denied for this request."},
                                status_code=401)
        if data is None:
            return _error(404, "NotFound", "Attachment not found")
        return Response(data, media_type="application/octet-stream")

    async def _file(self, request: Request) -> Response:
        with self._lock:
            data = self.files.get(request.path_params["item"])
        if data is None or request.query_params.get("tempauth") is None:
            return Response(status_code=401)
        return Response(data, media_type="application/octet-stream")

    async def _post(self, request: Request) -> JSONResponse:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        with self._lock:
            known = scheme == "Bearer" and token in self.tokens
            limited = self._rate_limits > 0
            if limited:
                self._rate_limits -= 1
        if not known:
            return JSONResponse({"message": "Authorization has been denied for this request."},
                                status_code=401)
        if limited:
            return JSONResponse(
                {"error": {"code": "TooManyRequests", "message": "Too many requests"}},
                status_code=429, headers={"Retry-After": "1"})
        raw = await request.body()
        if len(raw) > MAX_ACTIVITY_BYTES:
            return _error(413, "MessageSizeTooBig", "Message size is too big")
        body = await request.json()
        if not isinstance(body, dict) or body.get("type") != "message":
            return _error(400, "BadArgument", "Activity type is required")
        conversation = unquote(request.path_params["conversation"])
        reply_to = request.path_params.get("reply_to")
        message_id = f"1700000{next(self._ids):06d}"
        with self._lock:
            self.sent.setdefault(conversation, []).append({
                "id": message_id, "text": body.get("text", ""),
                "textFormat": body.get("textFormat"), "reply_to": reply_to,
                "attachments": body.get("attachments", [])})
            self.log.append(body.get("text", ""))
        return JSONResponse({"id": message_id}, status_code=201)
