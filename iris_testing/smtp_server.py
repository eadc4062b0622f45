"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives, for tests of Iris'
outbound mail: optional AUTH (PLAIN/LOGIN) and STARTTLS, and temporary failures on demand.

::

    with MailServer(user="iris", password="pw") as mail:   # smtp://iris:pw@127.0.0.1:<port>
        ...
    mail.received[0]["Subject"]
"""

from __future__ import annotations

import logging
import ssl
import threading
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from types import TracebackType
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from iris_testing.server import free_port

# aiosmtpd logs a deprecation warning for every successful AUTH; nothing Iris can act on.
logging.getLogger("mail.log").setLevel(logging.ERROR)


class _Handler:
    def __init__(self, server: MailServer) -> None:
        self.server = server

    async def handle_DATA(self, smtp: Any, session: Any, envelope: Any) -> str:
        with self.server.lock:
            if self.server.fail_times > 0:
                self.server.fail_times -= 1
                return "451 4.3.0 Temporary failure, try again later"
            message = BytesParser(policy=policy.default).parsebytes(envelope.content)
            assert isinstance(message, EmailMessage)
            self.server.received.append(message)
            self.server.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            self.server.tls_used.append(session.ssl is not None)
        return "250 2.0.0 OK queued"


class MailServer:
    def __init__(self, *, user: str | None = None, password: str | None = None,
                 tls_context: ssl.SSLContext | None = None,
                 require_starttls: bool = False) -> None:
        self.user, self.password = user, password
        self.lock = threading.Lock()
        self.received: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.tls_used: list[bool] = []
        self.fail_times = 0
        self.port = free_port()
        kwargs: dict[str, Any] = {}
        if user is not None:
            kwargs.update(authenticator=self._authenticate, auth_require_tls=tls_context
                          is not None)
        self.controller = Controller(
            _Handler(self), hostname="127.0.0.1", port=self.port, tls_context=tls_context,
            require_starttls=require_starttls, server_hostname="localhost", **kwargs)

    def _authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str,
                      data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (
            data.login.decode(), data.password.decode()) == (self.user, self.password)
        return AuthResult(success=ok, handled=False)

    def url(self, scheme: str = "smtp", host: str = "127.0.0.1") -> str:
        auth = f"{self.user}:{self.password}@" if self.user is not None else ""
        return f"{scheme}://{auth}{host}:{self.port}"

    def fail_next(self, times: int = 1) -> None:
        with self.lock:
            self.fail_times += times

    def messages(self) -> list[EmailMessage]:
        with self.lock:
            return list(self.received)

    def __enter__(self) -> MailServer:
        self.controller.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.controller.stop()
