"""Faults at the platforms, the model provider and Modal, and what became of the turns they hit
(see ``iris_testing.fault_runs``). Messages arrive as webhooks over HTTP; replies leave through
python-telegram-bot and slack_sdk to the fake APIs, where they are counted."""

from __future__ import annotations

import asyncio
import random
import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from core.clock import ManualClock
from core.contracts.dispatch import ChatRef
from core.model.llm import LiteLLMModel
from iris_testing.fault_runs import FaultOutcome
from iris_testing.llm_server import Failure, ScriptedLLM, Stall
from iris_testing.modal_fake import FakeModal
from iris_testing.platform_stack import Stack, platform_stack
from iris_testing.server import serve
from iris_testing.waiting import wait_until

MARK = re.compile(r"re: m:(\d+)\b")
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
FAILED_TURN = "The model provider"  # core.errors.ProviderError.user_message()


def _post(stack: Stack, platform: str, n: int) -> None:
    text = f"m:{n} hello"
    if platform == "telegram":
        response = stack.telegram_post(stack.telegram.make_update(text, user_id=200_000 + n))
    else:
        event = stack.slack.message_event(text, user=f"U{n:05d}", channel=f"D{n:05d}",
                                          channel_type="im")
        response = stack.slack_post(stack.slack.event_payload(event))
    assert response.status_code == 200, response.text


def _sent(stack: Stack, platform: str) -> list[tuple[str, str]]:
    """(chat, text) of every message the platform received from Iris."""
    if platform == "telegram":
        return [(str(m["chat_id"]), str(m["text"])) for m in stack.telegram.sent_messages()]
    return [(str(p["channel"]), str(p["text"])) for p in stack.slack.posted()]


def _chat_of(platform: str, n: int) -> str:
    return str(200_000 + n) if platform == "telegram" else f"D{n:05d}"


def _count(stack: Stack, platform: str, turns: int) -> tuple[int, int, int, int]:
    """(answered once, told it failed, lost, doubled) from what the platform received."""
    per_chat: dict[str, list[str]] = {}
    for chat, text in _sent(stack, platform):
        per_chat.setdefault(chat, []).append(text)
    answered = told = lost = doubled = 0
    for n in range(turns):
        texts = per_chat.get(_chat_of(platform, n), [])
        marks = Counter(int(m) for text in texts for m in MARK.findall(text))
        failures = sum(1 for text in texts if FAILED_TURN in text)
        if len(texts) > 1:
            doubled += 1
        elif marks[n] == 1:
            answered += 1
        elif failures == 1:
            told += 1
        else:
            lost += 1
    return answered, told, lost, doubled


def _wait(what: str, condition: Any, timeout: float = 120.0) -> None:
    wait_until(condition, what, timeout=timeout)


def _refused(stack: Stack) -> int:
    """Deliveries whose attempt failed and that wait for their next one."""
    return int(stack.rt.store.db.scalar(
        "SELECT count(*) FROM deliveries WHERE status = 'pending' AND last_error IS NOT NULL"
        " AND claimed_by IS NULL"))


def platform_rate_limit(home: Path, platform: str, *, turns: int,
                        retry_after: int = 30) -> FaultOutcome:
    """Every reply's first send is refused: Telegram's 429 with ``parameters.retry_after``,
    Slack's HTTP 429 ``ratelimited`` with ``Retry-After``. The store's clock is a ManualClock:
    a sweep one second before ``retry_after`` must send nothing, one after it everything."""
    from functions.sweeper import sweep

    clock = ManualClock(time.time())
    with platform_stack(home, clock=clock) as stack:
        if platform == "telegram":
            stack.telegram.fail_next("sendMessage", times=turns, error_code=429,
                                     retry_after=retry_after)
        else:
            stack.slack.fail_next("chat.postMessage", times=turns, status=429,
                                  error="ratelimited", retry_after=retry_after)
        for n in range(turns):
            _post(stack, platform, n)
        _wait("every first send to be refused",
              lambda: _refused(stack) == turns)
        clock.advance(retry_after - 1)
        early = asyncio.run(sweep(stack.rt)).deliveries_attempted
        clock.advance(2)
        report = asyncio.run(sweep(stack.rt))
        _wait("the replies", stack.settled)
        answered, told, lost, doubled = _count(stack, platform, turns)
    name = ("Telegram 429 (retry_after)" if platform == "telegram"
            else "Slack 429 ratelimited (Retry-After)")
    return FaultOutcome(name, turns, turns, answered, lost, doubled, told,
                        swept=report.deliveries_attempted,
                        detail=f"{early} sent before retry_after passed")


def model_faults(home: Path, *, turns: int, rate: float, seed: int = 1,
                 timeout: float = 1.0) -> FaultOutcome:
    """Telegram turns through litellm to the scripted server, which answers a ``rate`` of the
    calls 529 overloaded and stalls another ``rate`` mid-answer (the client times out after
    ``timeout`` s); Iris retries twice, then tells the user."""
    rng, lock, injected = random.Random(seed), threading.Lock(), Counter[str]()

    def answer(body: dict[str, Any]) -> Failure | Stall | str:
        with lock:
            roll = rng.random()
        if roll < rate:
            injected["529"] += 1
            return Failure(529, OVERLOADED)
        if roll < 2 * rate:
            injected["stall"] += 1
            return Stall(seconds=30)
        users = [m for m in body["messages"] if m.get("role") == "user"]
        found = re.findall(r"m:\d+", str(users[-1]["content"]))
        return f"re: {found[-1]}" if found else "ok"

    llm = ScriptedLLM()
    llm.handler = answer
    with serve(llm.app) as server:
        model = LiteLLMModel("openai/scripted-model", api_base=f"{server.url}/v1",
                             api_key="sk-scripted", timeout=timeout, retries=2)
        with platform_stack(home, model=model) as stack:
            for n in range(turns):
                _post(stack, "telegram", n)
            _wait("every turn to end", lambda: stack.rt.store.db.scalar(
                "SELECT count(*) FROM inbox WHERE status != 'pending'") == turns, 300)
            _wait("the replies", stack.settled)
            answered, told, lost, doubled = _count(stack, "telegram", turns)
            notices = [text for _, text in _sent(stack, "telegram") if FAILED_TURN in text]
    said = f'; told: "{notices[0]}"' if notices else ""
    return FaultOutcome(
        f"model 529 overloaded / stalls mid-answer ({rate:.0%} each)",
        injected["529"] + injected["stall"], turns, answered, lost, doubled, told,
        model_calls=len(llm.requests),
        detail=f"{injected['529']} × 529, {injected['stall']} × stalled{said}")


def modal_spawn(home: Path, *, turns: int, failing: int) -> FaultOutcome:
    """Webhooks whose worker spawn fails (``failing`` chats: every attempt refused with
    ``modal.exception.ConnectionError``): the ack is still 200, the entry waits, and the next
    tick's sweeper spawns it. Spawned workers run one after another in a thread of their own,
    each with its own event loop, as a container would."""
    import modal

    from functions.dispatch_modal import ModalDispatcher
    from functions.tick import run_tick
    from functions.worker import drain

    clock = ManualClock(time.time())
    holder: dict[str, Any] = {}
    containers = ThreadPoolExecutor(max_workers=1, thread_name_prefix="worker-container")

    def container(user_id: str, chat_key: str) -> None:
        containers.submit(lambda: asyncio.run(drain(holder["rt"], ChatRef(user_id, chat_key))))

    sdk = FakeModal(on_spawn=container)
    dispatcher = ModalDispatcher("iris", sdk=sdk, attempts=3, backoff=0)
    with platform_stack(home, clock=clock, dispatcher=dispatcher) as stack:
        holder["rt"] = stack.rt
        sdk.fail_next(*[modal.exception.ConnectionError("spawn refused")] * (3 * failing))
        for n in range(turns):
            _post(stack, "telegram", n)
        _wait("the spawned chats", lambda: _count(stack, "telegram", turns)[0] == turns - failing)
        waiting = int(stack.rt.store.db.scalar(
            "SELECT count(*) FROM inbox WHERE status = 'pending'"))
        clock.advance(10)  # past the sweeper's grace
        report = asyncio.run(run_tick(stack.rt, cron=lambda rt: None))
        _wait("the swept chats", lambda: sum(_count(stack, "telegram", turns)[:2]) == turns)
        containers.shutdown(wait=True)
        _wait("the replies", stack.settled)
        answered, told, lost, doubled = _count(stack, "telegram", turns)
    swept = report.sweep.chats_resumed if report.sweep else 0
    return FaultOutcome(
        "Modal worker spawn refused", 3 * failing, turns, answered, lost, doubled, told,
        swept=swept, detail=f"{waiting} entries waited for the tick; "
        f"{len(sdk.spawned())} spawn calls")
