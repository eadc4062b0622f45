"""A minimal Anthropic Messages API on loopback that records each request body, for checking
what litellm sends (cache_control breakpoints, the system prompt) and how usage comes back."""

from __future__ import annotations

import itertools

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class FakeAnthropic:
    def __init__(self, *, cache_read: int = 0, cache_write: int = 0) -> None:
        self.requests: list[dict] = []
        self.replies: list[str] = []
        self.cache_read = cache_read
        self.cache_write = cache_write
        self._ids = itertools.count(1)
        self.app = Starlette(routes=[
            Route("/v1/messages", self._messages, methods=["POST"]),
            Route("/messages", self._messages, methods=["POST"]),
        ])

    async def _messages(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        text = self.replies.pop(0) if self.replies else "ok"
        return JSONResponse({
            "id": f"msg_{next(self._ids)}", "type": "message", "role": "assistant",
            "model": body.get("model", "claude"), "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 3,
                      "cache_creation_input_tokens": self.cache_write,
                      "cache_read_input_tokens": self.cache_read},
        })
