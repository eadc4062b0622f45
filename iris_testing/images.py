"""Real image bytes for tests, and a site on loopback that serves them (and things that are not
images) the way a web server would."""

from __future__ import annotations

import base64
import struct
import zlib
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route


def make_png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (200, 30, 30),
             noise: int = 0) -> bytes:
    """A valid PNG of one colour; ``noise`` extra bytes in a private ancillary chunk make it
    as large as a test needs."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header)
    if noise:
        body += chunk(b"teXt", b"pad\x00" + b"x" * noise)
    body += chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def as_data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


@dataclass
class ImageSite:
    """``/<name>`` answers the bytes put under that name with the claimed type; ``/go/<name>``
    redirects there. ``hits`` lists the paths asked for."""

    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.app = Starlette(routes=[
            Route("/go/{name}", self._redirect),
            Route("/{name}", self._file),
        ])

    def put(self, name: str, data: bytes, claimed: str = "image/png") -> None:
        self.files[name] = (data, claimed)

    async def _file(self, request: Request) -> Response:
        self.hits.append(request.url.path)
        found = self.files.get(request.path_params["name"])
        if found is None:
            return Response("not found", status_code=404)
        return Response(found[0], media_type=found[1])

    async def _redirect(self, request: Request) -> Response:
        self.hits.append(request.url.path)
        return RedirectResponse(f"/{request.path_params['name']}", status_code=302)
