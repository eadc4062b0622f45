"""core.tls: one verifying TLS context per process for every outbound client, where httpx
would build one (and load the whole CA bundle) for each client a sender opens."""

from __future__ import annotations

import asyncio
import ssl

import certifi
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from core import tls as tls_module
from core.platforms.oauth_token import CachedToken
from core.tls import tls
from iris_testing.server import serve


async def _token(request):
    return JSONResponse({"access_token": "t-1", "expires_in": 3600})


@pytest.fixture
def contexts_built(monkeypatch):
    """How many TLS contexts were built (``ssl.create_default_context`` calls), from now."""
    built: list[int] = []
    real = ssl.create_default_context

    def counting(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counting)
    tls_module._context.cache_clear()
    yield built
    tls_module._context.cache_clear()


def test_a_sender_opening_a_client_per_call_builds_one_context(contexts_built):
    with serve(Starlette(routes=[Route("/token", _token, methods=["POST"])])) as server:
        async def three_fetches() -> list[str]:
            return [await CachedToken("token endpoint").fetch(f"{server.url}/token", {})
                    for _ in range(3)]

        assert asyncio.run(three_fetches()) == ["t-1"] * 3
    assert len(contexts_built) == 1  # httpx alone: one per client, three


def test_the_context_verifies_and_follows_ssl_cert_file(contexts_built, monkeypatch):
    default = tls()
    assert default.verify_mode == ssl.CERT_REQUIRED and default.check_hostname
    assert tls() is default
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    chosen = tls()
    assert chosen is not default and tls() is chosen
    assert len(contexts_built) == 2


def test_every_outbound_async_client_is_made_by_tls_client():
    """A sender that opened ``httpx.AsyncClient(...)`` itself would build a context (and load
    the CA bundle) per call again: in core/, functions/ and sandboxes/ only ``core.tls`` makes
    one (an MCP session's client is long-lived and made by the MCP SDK's own httpx)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    made_elsewhere = []
    for folder in ("core", "functions", "sandboxes"):
        for path in (root / folder).rglob("*.py"):
            if path == root / "core" / "tls.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "AsyncClient"
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "httpx"):
                    made_elsewhere.append(f"{path.relative_to(root)}:{node.lineno}")
    assert made_elsewhere == []
    assert "tls_client(" in (root / "core" / "platforms" / "oauth_token.py").read_text()
