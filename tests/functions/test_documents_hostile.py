"""Hostile documents through the real entry points (HTTP API ``file`` parts, ``web_extract``
over the HTTP API): the PDF content bomb, a gzip HTML page that grows into millions of
elements, and a parser killed mid-document. Other users and ``/healthz`` answer meanwhile; the
bomb's text is cut with a note; a crash stores nothing."""

import base64
import os
import signal
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from core.errors import NotFound
from iris_testing.hostile_documents import html_bomb, parser_children, pdf_bomb
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from iris_testing.waiting import wait_until
from tests.fakes.stack import emulator_stack

BOMB = pdf_bomb()
BOMBERS = 6  # as many as the default thread pool of a 2-core machine holds


@pytest.fixture
def llm():
    scripted = ScriptedLLM()
    scripted.handler = lambda body: "noted."
    return scripted


def send_document(stack, user, data, name="report.pdf", mime="application/pdf"):
    url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    return stack.client.with_options(timeout=600).chat.completions.create(
        model="iris", user=user, messages=[
            {"role": "user", "content": [{"type": "text", "text": "Summarise it"},
                                         {"type": "file", "file": {"filename": name,
                                                                   "file_data": url}}]}])


def known(stack, account):
    try:
        return stack.runtime.store.users.resolve(account)
    except NotFound:
        return None


def prompts_of(llm, text):
    return [r["messages"][-1]["content"] for r in llm.requests
            if text in str(r["messages"][-1]["content"])]


def ask(stack, user, text, timeout=600):
    return stack.client.with_options(timeout=timeout).chat.completions.create(
        model="iris", user=user, messages=[{"role": "user", "content": text}])


@pytest.mark.process  # starts a child process (make check runs without them)
@pytest.mark.timeout(600)  # six bombs cut at 5 s, two at a time, on a loaded machine
def test_pdf_bombs_from_six_users_never_hold_up_another_users_turn(llm, monkeypatch):
    """Alice's second turn (the first loads the model client) and /healthz are answered while
    the bombs are still being read; each bomb's text is cut after the wall time, with a note."""
    with emulator_stack(llm, monkeypatch, IRIS_PARSE_WALL_SECONDS=5) as stack, \
            ThreadPoolExecutor(BOMBERS) as pool:
        assert ask(stack, "alice", "Good morning").choices[0].message.content == "noted."
        bombs = [pool.submit(send_document, stack, f"mallory{i}", BOMB) for i in range(BOMBERS)]
        wait_until(lambda: all(known(stack, f"http:mallory{i}") for i in range(BOMBERS)),
                   "every bomb to be accepted")
        wait_until(lambda: parser_children(os.getpid()), "a bomb being parsed")

        answer = ask(stack, "alice", "Hello?", timeout=120)  # a deadline, not a measure
        health = httpx.get(f"{stack.url}/healthz", timeout=30)
        still_parsing = parser_children(os.getpid())

        assert answer.choices[0].message.content == "noted." and health.status_code == 200
        assert still_parsing, "Alice was answered only after the bombs were read"
        assert not all(bomb.done() for bomb in bombs)
        for bomb in bombs:
            assert bomb.result(timeout=600).choices[0].message.content == "noted."
        seen = prompts_of(llm, "saved as inbox/report.pdf")
        assert len(seen) == BOMBERS
        for prompt in seen:
            assert "PDF, 300 pages" in prompt
            assert "of 300 pages: reading it took too long (over 5 s)]" in prompt
        assert len(parser_children(os.getpid())) == 0


@pytest.mark.process  # starts a child process (make check runs without them)
def test_a_parser_killed_mid_document_is_a_clear_error_and_stores_nothing(llm, monkeypatch):
    with emulator_stack(llm, monkeypatch) as stack, ThreadPoolExecutor(1) as pool:
        sent = pool.submit(send_document, stack, "mallory", BOMB)
        (child,) = wait_until(lambda: parser_children(os.getpid()), "the bomb being parsed")
        os.kill(child.pid, signal.SIGKILL)
        assert sent.result(timeout=120).choices[0].message.content == "noted."
        (prompt,) = prompts_of(llm, "report.pdf")
        assert prompt == ("Summarise it\n\n[the user sent 'report.pdf', which was not saved: it "
                          "could not be read: the parser stopped unexpectedly (signal 9)]")
        rt = stack.runtime
        user = rt.store.users.resolve("http:mallory")
        assert not (rt.settings.home / "workspaces" / user / "inbox").exists()


def gzip_site():
    async def page(request):
        return Response(html_bomb(), media_type="text/html",
                        headers={"Content-Encoding": "gzip"})

    return Starlette(routes=[Route("/tiny.html", page)])


@pytest.mark.process  # starts a child process (make check runs without them)
@pytest.mark.timeout(400)
def test_a_gzip_html_bomb_read_by_web_extract_is_cut_for_memory(llm, monkeypatch):
    with serve(gzip_site()) as site, emulator_stack(
            llm, monkeypatch, IRIS_PARSE_MEMORY_MB=400, IRIS_PARSE_WALL_SECONDS=300,
            IRIS_PARSE_CPU_SECONDS=300, IRIS_WEB_ALLOW_HOSTS=f"127.0.0.1:{site.port}",
            IRIS_WEB_EXTRACT_CHARS=500) as stack:
        llm.tool_call("web_extract", {"urls": [f"{site.url}/tiny.html"]}).reply("Read.")
        answer = stack.client.chat.completions.create(model="iris", user="alice", messages=[
            {"role": "user", "content": "What does that page say?"}])
        assert answer.choices[0].message.content == "Read."
        (result,) = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
        assert "## Tiny\n" in result
        assert ("[the page's text was cut: reading it needed too much memory "
                "(over 400 MB)]") in result
        assert len(parser_children(os.getpid())) == 0
