"""The chat's line reader (local_dev/lineinput.py) over a real pipe: lines as ``input()`` gives
them. The signal it exists for is tested on the real `iris run` in test_signal_window.py."""

import io
import os

import pytest

from local_dev.lineinput import LineInput


def reader_over(data: bytes) -> tuple[LineInput, io.StringIO]:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    shown = io.StringIO()
    return LineInput(stdin=open(read_end, encoding="utf-8"), stdout=shown), shown


def test_lines_arriving_together_are_read_one_at_a_time_then_eof():
    lines, shown = reader_over("hello\n/new\r\nlast, with no newline ✓".encode())
    assert lines.read("you › ") == "hello"
    assert lines.read("you › ") == "/new\r"  # as input(): only the newline goes
    assert lines.read("   … ") == "last, with no newline ✓"
    with pytest.raises(EOFError):
        lines.read("you › ")
    assert shown.getvalue() == "you › you ›    … you › "


def test_bytes_that_are_not_utf8_do_not_end_the_chat():
    lines, _ = reader_over(b"caf\xe9\n")
    assert lines.read("> ") == "caf\ufffd"


def test_a_stream_without_a_descriptor_is_read_by_input(monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: f"typed after {prompt!r}")
    assert LineInput(stdin=io.StringIO("ignored\n")).read("you › ") == "typed after 'you › '"
