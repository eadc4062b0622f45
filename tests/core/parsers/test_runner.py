"""The parsing child, run for real: each limit cuts the text with its reason and keeps what was
read, a crash is an error, and no child outlives its parse, its caller or its server."""

import asyncio
import gzip
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.parsers.runner import ParseLimits, ParserCrashed, ParseRefused, parse
from iris_testing.hostile_documents import (
    alive,
    html_bomb,
    parser_children,
    pdf_bomb,
    zombies_of,
)
from iris_testing.waiting import until, wait_until
from iris_testing.web_fakes import make_pdf

GENEROUS = ParseLimits(cpu_seconds=300, wall_seconds=300, memory_mb=2048)
MILD_BOMB = pdf_bomb(pages=300, stream_bytes=100_000)  # ~0.3 s per page: several pages, not all


def run(coro):
    return asyncio.run(coro)


def limits(**changes) -> ParseLimits:
    return ParseLimits(**{**GENEROUS.__dict__, **changes})


def test_a_pdf_is_read_page_by_page_in_a_child_that_is_then_reaped():
    parsed = run(parse("pdf", make_pdf(["Quarterly report", "Revenue grew."]), user_id="u",
                       limits=GENEROUS))
    assert parsed.text == "--- page 1 ---\nQuarterly report\nRevenue grew."
    assert (parsed.pages, parsed.pages_read, parsed.cut, parsed.cut_note()) == (1, 1, None, "")
    assert parser_children(os.getpid()) == [] and zombies_of(os.getpid()) == []


def test_past_the_wall_time_the_pages_read_so_far_come_back_with_a_note():
    parsed = run(parse("pdf", MILD_BOMB, user_id="u", limits=limits(wall_seconds=8)))
    assert parsed.cut == "time" and parsed.pages == 300
    assert 1 <= parsed.pages_read < 300
    assert parsed.text.startswith("--- page 1 ---\nx")
    assert parsed.cut_note() == (f"[the document's text was cut after {parsed.pages_read} of "
                                 "300 pages: reading it took too long (over 8 s)]")
    assert parser_children(os.getpid()) == [] and zombies_of(os.getpid()) == []


def test_past_its_cpu_time_the_kernel_ends_the_child():
    parsed = run(parse("pdf", pdf_bomb(), user_id="u", limits=limits(cpu_seconds=2)))
    assert parsed.cut == "cpu" and parsed.pages == 300 and parsed.pages_read < 300
    assert "over 2 s of CPU" in parsed.cut_note()


def test_past_its_memory_the_child_stops_and_says_so():
    page = gzip.decompress(html_bomb())
    parsed = run(parse("html", page, user_id="u", limits=limits(memory_mb=400)))
    assert (parsed.cut, parsed.title) == ("memory", "Tiny")
    assert parsed.cut_note("page") == ("[the page's text was cut: reading it needed too much "
                                       "memory (over 400 MB)]")


def test_past_the_output_cap_the_child_is_stopped_and_the_text_is_exactly_the_cap():
    parsed = run(parse("pdf", MILD_BOMB, user_id="u", limits=limits(output_chars=5_000)))
    assert parsed.cut == "output" and len(parsed.text) == 5_000
    assert parsed.cut_note().endswith("its text is longer than 5000 characters]")
    assert parser_children(os.getpid()) == []


def test_a_document_the_parser_rejects_is_refused_with_its_reason():
    with pytest.raises(ParseRefused, match="not a readable PDF"):
        run(parse("pdf", b"%PDF-1.4\nnot really", user_id="u", limits=GENEROUS))


def test_a_child_killed_from_outside_is_a_crash_not_a_cut():
    async def scenario():
        task = asyncio.ensure_future(parse("pdf", pdf_bomb(), user_id="u", limits=GENEROUS))
        (child,) = await until(lambda: parser_children(os.getpid()), "the parsing child")
        os.kill(child.pid, signal.SIGKILL)
        return await task

    with pytest.raises(ParserCrashed, match=r"stopped unexpectedly \(signal 9\)"):
        run(scenario())
    assert zombies_of(os.getpid()) == []


def test_a_cancelled_parse_kills_and_reaps_its_child():
    async def scenario():
        task = asyncio.ensure_future(parse("pdf", pdf_bomb(), user_id="u", limits=GENEROUS))
        (child,) = await until(lambda: parser_children(os.getpid()), "the parsing child")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return child

    child = run(scenario())
    assert not alive(child.pid) and zombies_of(os.getpid()) == []


def resident_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    line = next((x for x in status.splitlines() if x.startswith("VmRSS:")), "VmRSS: 0 kB")
    return int(line.split()[1]) / 1024


def test_the_child_dies_with_its_server(tmp_path):
    """The page takes the child minutes and it writes nothing meanwhile: only the death signal
    set with PR_SET_PDEATHSIG can end it when its server is killed."""
    page = tmp_path / "page.html"
    page.write_bytes(gzip.decompress(html_bomb()))
    server = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import asyncio, pathlib
        from core.parsers.runner import ParseLimits, parse
        asyncio.run(parse("html", pathlib.Path({str(page)!r}).read_bytes(), user_id="u",
                          limits=ParseLimits(cpu_seconds=600, wall_seconds=600,
                                             memory_mb=4096)))
        """)], env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        (child,) = wait_until(lambda: parser_children(server.pid), "the server's parsing child")
        wait_until(lambda: resident_mb(child.pid) > 200, "the child to be deep in the page",
                   seen=lambda: resident_mb(child.pid))
        server.kill()
        server.wait()
        wait_until(lambda: not alive(child.pid), "the orphaned child to die",
                   seen=lambda: parser_children())
    finally:
        server.kill()
        server.wait()
        for left in parser_children():
            if left.parent in (server.pid, 1):
                os.kill(left.pid, signal.SIGKILL)


def test_a_users_second_document_waits_behind_their_first_not_in_front_of_others():
    """Two slots, Alice's two bombs asked first, Bob's after: Bob's runs beside Alice's first,
    and finishes before Alice's second, which waited for her first."""
    bound = limits(wall_seconds=6, concurrency=2)
    ended: list[str] = []

    async def one(user: str, name: str):
        await parse("pdf", pdf_bomb(), user_id=user, limits=bound)
        ended.append(name)

    async def scenario():
        first = asyncio.ensure_future(one("alice", "alice-1"))
        await until(lambda: len(parser_children(os.getpid())) == 1, "Alice's first child")
        second = asyncio.ensure_future(one("alice", "alice-2"))
        bob = asyncio.ensure_future(one("bob", "bob"))
        await until(lambda: len(parser_children(os.getpid())) == 2, "Bob's child beside hers")
        await asyncio.gather(first, second, bob)

    run(scenario())
    assert ended.index("bob") < ended.index("alice-2")
    assert ended.index("alice-1") < ended.index("alice-2")


def test_html_mail_is_read_in_linear_time():
    """``<a `` repeated 40,000 times costs the standard library's HTMLParser (quadratic) about
    ten minutes, far past this budget; lxml reads it at once."""
    parsed = run(parse("mail", b"<p>Hello <b>there</b></p><div>Bye</div>" + b"<a " * 40_000,
                       user_id="u", limits=limits(wall_seconds=60)))
    assert parsed.cut is None and parsed.text.startswith("Hello there\nBye")
