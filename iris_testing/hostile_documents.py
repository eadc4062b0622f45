"""Documents built to cost their reader: the PDF content bomb of issue 28 and a compressed
HTML page that grows into millions of elements, plus a way to find the parsing children a
process started (by /proc, as ``ps`` would)."""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

TEXT_OPERATORS = b"BT /F1 12 Tf 10 10 Td (x) Tj ET\n"


def pdf_bomb(pages: int = 300, stream_bytes: int = 2_000_000) -> bytes:
    """``pages`` pages sharing one FlateDecode content stream of ``stream_bytes`` of text
    operators (about 53 KB for the defaults; pypdf spends seconds on every page)."""
    content = TEXT_OPERATORS * (stream_bytes // len(TEXT_OPERATORS))
    stream = zlib.compress(content, 9)
    font = 4 + pages
    kids = " ".join(f"{4 + i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream
        + b"\nendstream",
        *(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
          f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode() for _ in range(pages)),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


def html_bomb(size: int = 4_900_000) -> bytes:
    """An HTML page of ``size`` bytes that is almost all tiny elements, gzip-compressed to a few
    KB: served with ``Content-Encoding: gzip`` it arrives small and parses into millions of
    nodes."""
    head = b"<html><head><title>Tiny</title></head><body><p>Opening words.</p>"
    cell = b"<i><b>x</b></i>"
    body = head + cell * ((size - len(head)) // len(cell)) + b"</body></html>"
    return gzip.compress(body, 9)


@dataclass(frozen=True)
class Child:
    pid: int
    parent: int
    state: str


def parser_children(parent: int | None = None) -> list[Child]:
    """The live parsing children (``core/parsers/child.py``), of ``parent`` if given."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if b"core/parsers/child.py" not in cmdline:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        child = Child(pid=int(entry.name), parent=int(fields[1]), state=fields[0])
        if child.state in ("Z", "X"):
            continue
        if parent is None or child.parent == parent:
            found.append(child)
    return found


def zombies_of(parent: int) -> list[int]:
    """Children of ``parent`` that ended and were never waited for."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == parent:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
