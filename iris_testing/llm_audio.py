"""``POST /v1/audio/transcriptions`` for the scripted OpenAI-compatible server
(``ScriptedLLM.transcriptions``), answered in OpenAI's shapes: multipart in (``file``,
``model``, ``response_format``); out ``json`` (``text`` and ``usage``), ``verbose_json`` (also
``task``, ``language``, ``duration``, ``segments``) or plain ``text``. whisper-1's usage is
``{"type": "duration", "seconds": …}``; the gpt-4o transcribe models' is token counts. Errors
come as OpenAI error bodies and carry no usage, as the real API's do."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Self

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response


@dataclass(frozen=True)
class Upload:
    model: str
    filename: str
    data: bytes
    response_format: str


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class Transcriptions:
    """Answers every transcription with ``text`` for audio of ``seconds`` seconds, except for
    the failures queued with ``fail``, which are answered first, one per request."""

    def __init__(self, text: str = "scripted transcript", seconds: float = 4.0) -> None:
        self.text, self.seconds = text, seconds
        self._lock = threading.Lock()
        self._failures: deque[int] = deque()
        self._uploads: list[Upload] = []
        self.answered = 0  # requests answered with a transcript (the ones a provider bills)

    def fail(self, status: int, times: int = 1) -> Self:
        with self._lock:
            self._failures.extend([status] * times)
        return self

    @property
    def uploads(self) -> list[Upload]:
        with self._lock:
            return list(self._uploads)

    def usage(self, model: str) -> dict[str, Any]:
        if "transcribe" in model:  # gpt-4o-transcribe, gpt-4o-mini-transcribe: billed by token
            audio_tokens, output_tokens = int(self.seconds * 10), max(1, len(self.text) // 4)
            return {"type": "tokens", "input_tokens": audio_tokens,
                    "input_token_details": {"text_tokens": 0, "audio_tokens": audio_tokens},
                    "output_tokens": output_tokens,
                    "total_tokens": audio_tokens + output_tokens}
        return {"type": "duration", "seconds": self.seconds}

    async def answer(self, request: Request) -> Response:
        form = await request.form()
        upload, model = form.get("file"), form.get("model")
        response_format = str(form.get("response_format") or "json")
        if upload is None or isinstance(upload, str) or not isinstance(model, str) or not model:
            return JSONResponse(error_body(400, "file and model are required"), 400)
        data = await upload.read()
        with self._lock:
            self._uploads.append(Upload(model, upload.filename or "", data, response_format))
            status = self._failures.popleft() if self._failures else 200
            if status == 200 and data:
                self.answered += 1
        if status != 200:
            return JSONResponse(error_body(status, f"scripted failure {status}"), status)
        if not data:
            return JSONResponse(error_body(400, "Audio file is empty."), 400)
        if response_format == "text":
            return PlainTextResponse(self.text + "\n")
        body: dict[str, Any] = {"text": self.text, "usage": self.usage(model)}
        if response_format == "verbose_json":
            body = {"task": "transcribe", "language": "english", "duration": self.seconds,
                    "text": self.text,
                    "segments": [{"id": 0, "seek": 0, "start": 0.0, "end": self.seconds,
                                  "text": f" {self.text}", "tokens": [50364, 50414],
                                  "temperature": 0.0, "avg_logprob": -0.25,
                                  "compression_ratio": 1.1, "no_speech_prob": 0.01}],
                    "usage": self.usage(model)}
        return JSONResponse(body)
