"""A load of webhook deliveries from all the platforms (Telegram, Slack, WhatsApp, Discord,
email, LINE, SMS, Matrix) against a running platform stack, and the
check that every message got exactly one reply, in order. Shared by tests/functions/
test_reliability.py (small) and bench/webhook_reliability.py (1,000 deliveries).

Each chat is a person writing messages one after another (the next is sent once the platform
accepted the previous); chats interleave in a random order; a share of the deliveries is
repeated later, as a platform does when it thinks a delivery failed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
import time
from collections import defaultdict
from collections.abc import Awaitable
from contextlib import suppress
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

import httpx

from iris_testing.line_api import FakeLine
from iris_testing.mail_inbound import raw_mail
from iris_testing.platform_stack import (
    EMAIL_SECRET,
    LINE_SECRET,
    MATRIX_HS_TOKEN,
    PUBLIC_URL,
    SLACK_SECRET,
    TELEGRAM_SECRET,
    TWILIO_TOKEN,
    WHATSAPP_APP_SECRET,
    Stack,
)
from iris_testing.slack_api import FakeSlack
from iris_testing.twilio_api import FakeTwilio
from iris_testing.waiting import WaitTimeout, wait_until
from iris_testing.whatsapp_api import FakeWhatsApp

PLATFORMS = ("telegram", "slack", "whatsapp", "discord", "email",
             "line", "sms", "matrix")
JWT_PLATFORMS = ("teams", "googlechat")  # on a stack started with ``jwt_platforms``

MARK = re.compile(r"m:(\d+):(\d+)")


@dataclass(frozen=True)
class Delivery:
    chat: int
    seq: int
    platform: str
    body: bytes
    repeat: bool = False


@dataclass
class Report:
    messages: int
    deliveries: int
    lost: int
    doubled: int
    out_of_order: int
    seconds: float
    statuses: dict[int, int] = field(default_factory=dict)
    retried: int = 0  # replies whose first send failed and that a sweep sent later

    @property
    def turns_per_second(self) -> float:
        return self.messages / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        return (
            f"{self.deliveries} deliveries of {self.messages} messages: lost {self.lost}, "
            f"doubled {self.doubled}, out of order {self.out_of_order}; "
            f"{self.turns_per_second:.1f} turns/s ({self.seconds:.2f} s); "
            f"HTTP statuses {dict(sorted(self.statuses.items()))}; "
            f"{self.retried} replies sent on a retry"
        )


def body_for(stack: Stack, platform: str, chat: int, seq: int, text: str) -> bytes:
    """The webhook body the platform sends for message ``seq`` of person ``chat``."""
    if platform == "telegram":
        return json.dumps(stack.telegram.make_update(text, user_id=100_000 + chat)).encode()
    if platform == "slack":
        event = stack.slack.message_event(text, user=f"U{chat:05d}", channel=f"D{chat:05d}",
                                          channel_type="im")
        return json.dumps(stack.slack.event_payload(event)).encode()
    if platform == "whatsapp":
        return json.dumps(stack.whatsapp.message_payload(
            text, wa_id=f"49151{chat:07d}", message_id=f"wamid.load.{chat}.{seq}")).encode()
    if platform == "discord":
        return json.dumps(stack.discord.interaction(
            "ask", {"text": text}, user_id=str(800_000 + chat),
            channel_id=str(900_000 + chat))).encode()
    if platform == "teams" and stack.teams is not None:
        return json.dumps(stack.teams.activity(
            text, user=f"29:load{chat}", conversation=f"a:load{chat}",
            activity_id=f"load-{chat}-{seq}")).encode()
    if platform == "googlechat" and stack.googlechat is not None:
        return json.dumps(stack.googlechat.event(
            text, user=f"users/{chat}", space=f"spaces/LOAD{chat}",
            message_id=f"load-{chat}-{seq}")).encode()
    if platform == "line":
        user = f"U{chat:032x}"
        return json.dumps(stack.line.webhook(stack.line.message_event(
            text, user=user, message_id=f"{700_000 + chat}{seq:05d}"))).encode()
    if platform == "matrix":
        event = stack.matrix.message_event(text, sender=f"@user{chat}:example.org",
                                           room=f"!room{chat}:example.org",
                                           event_id=f"$load{chat}.{seq}")
        return stack.matrix.transaction(event)
    if platform == "sms":
        form = stack.twilio.inbound(text, sender=f"+1555{chat:07d}",
                                    sid=f"SM{chat:016x}{seq:016x}")
        return urlencode(form).encode()
    root = f"load-{chat}-0@mail.example.com"
    return raw_mail(text, sender=f"user{chat}@example.com", subject=f"chat {chat}",
                    message_id=f"load-{chat}-{seq}@mail.example.com",
                    in_reply_to=root if seq else None, references=[root] if seq else None)


def plan(stack: Stack, *, messages: int, chats: int, repeat_share: float,
         seed: int = 7, platforms: tuple[str, ...] = PLATFORMS) -> list[list[Delivery]]:
    """Per chat, its deliveries in the order the person sent them (repeats not yet placed)."""
    per_chat: list[list[Delivery]] = []
    for chat in range(chats):
        count = messages // chats + (1 if chat < messages % chats else 0)
        platform = platforms[chat % len(platforms)]
        lane = [Delivery(chat, seq, platform, body_for(stack, platform, chat, seq,
                                                       f"m:{chat}:{seq}"))
                for seq in range(count)]
        per_chat.append(lane)
    return per_chat


def _post(http: httpx.AsyncClient, url: str, stack: Stack,
          delivery: Delivery) -> Awaitable[httpx.Response]:
    json_type = {"Content-Type": "application/json"}
    if delivery.platform == "telegram":
        headers = {**json_type, "X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET}
        return http.post(f"{url}/telegram/webhook", content=delivery.body, headers=headers)
    if delivery.platform == "whatsapp":
        headers = {**json_type, **FakeWhatsApp.sign(delivery.body, WHATSAPP_APP_SECRET)}
        return http.post(f"{url}/whatsapp/webhook", content=delivery.body, headers=headers)
    if delivery.platform == "discord":
        headers = {**json_type, **stack.discord.sign(delivery.body)}
        return http.post(f"{url}/discord/interactions", content=delivery.body, headers=headers)
    if delivery.platform == "teams" and stack.teams is not None:
        return http.post(f"{url}/teams/messages", content=delivery.body,
                         headers=stack.teams.headers())
    if delivery.platform == "googlechat" and stack.googlechat is not None:
        return http.post(f"{url}/googlechat/events", content=delivery.body,
                         headers=stack.googlechat.headers())
    if delivery.platform == "line":
        headers = {**json_type, **FakeLine.sign(delivery.body, LINE_SECRET)}
        return http.post(f"{url}/line/webhook", content=delivery.body, headers=headers)
    if delivery.platform == "matrix":
        headers = {**json_type, "Authorization": f"Bearer {MATRIX_HS_TOKEN}"}
        txn = f"load-{delivery.chat}-{delivery.seq}"
        return http.put(f"{url}/_matrix/app/v1/transactions/{txn}", content=delivery.body,
                        headers=headers)
    if delivery.platform == "sms":
        form = dict(parse_qsl(delivery.body.decode(), keep_blank_values=True))
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   **FakeTwilio.sign(PUBLIC_URL + "/sms/webhook", form, TWILIO_TOKEN)}
        return http.post(f"{url}/sms/webhook", content=delivery.body, headers=headers)
    if delivery.platform == "email":
        headers = {"Content-Type": "message/rfc822", "Authorization": f"Bearer {EMAIL_SECRET}"}
        return http.post(f"{url}/email/inbound", content=delivery.body, headers=headers)
    headers = {**json_type, **FakeSlack.sign(delivery.body, SLACK_SECRET)}
    if delivery.repeat:
        headers["X-Slack-Retry-Num"] = "1"
    return http.post(f"{url}/slack/events", content=delivery.body, headers=headers)


def platform_texts(stack: Stack, platform: str) -> list[str]:
    """The replies one fake platform received, in the order it received them."""
    if platform == "telegram":
        return [m["text"] for m in stack.telegram.sent_messages()]
    if platform == "slack":
        return [p["text"] for p in stack.slack.posted()]
    if platform == "whatsapp":
        return stack.whatsapp.sent()
    if platform == "discord":
        return stack.discord.texts()
    if platform in JWT_PLATFORMS:
        fake = stack.teams if platform == "teams" else stack.googlechat
        return list(fake.log) if fake is not None else []
    if platform == "line":
        return stack.line.sent()
    if platform == "sms":
        return stack.twilio.sent()
    if platform == "matrix":
        return stack.matrix.sent()
    return [mail.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
            .strip() for mail in stack.mails()]


def sent_texts(stack: Stack) -> list[str]:
    """Every reply the fake platforms received, per platform in the order received."""
    return [text for platform in PLATFORMS + JWT_PLATFORMS
            for text in platform_texts(stack, platform)]


async def deliver(stack: Stack, lanes: list[list[Delivery]], *, repeat_share: float,
                  concurrency: int = 16, seed: int = 7) -> dict[int, int]:
    rng = random.Random(seed)
    order = [chat for chat, lane in enumerate(lanes) for _ in lane]
    rng.shuffle(order)
    cursor = [0] * len(lanes)
    queue: list[Delivery] = []
    busy: set[int] = set()
    statuses: dict[int, int] = defaultdict(int)
    repeats: list[Delivery] = []
    for chat in order:
        delivery = lanes[chat][cursor[chat]]
        cursor[chat] += 1
        queue.append(delivery)
        if rng.random() < repeat_share:
            repeats.append(Delivery(delivery.chat, delivery.seq, delivery.platform,
                                    delivery.body, repeat=True))
    for repeat in repeats:  # a repeat arrives some time after its original
        first = next(i for i, d in enumerate(queue)
                     if (d.chat, d.seq) == (repeat.chat, repeat.seq) and not d.repeat)
        queue.insert(rng.randint(first + 1, len(queue)), repeat)

    done_first: set[tuple[int, int]] = set()
    condition = asyncio.Condition()

    async def worker(http: httpx.AsyncClient) -> None:
        while True:
            async with condition:
                pick = None
                while pick is None:
                    if not queue:
                        return
                    pick = next((i for i, d in enumerate(queue) if d.chat not in busy and (
                        d.seq == 0 or (d.chat, d.seq - 1) in done_first or d.repeat)), None)
                    if pick is None:
                        await condition.wait()
                delivery = queue.pop(pick)
                busy.add(delivery.chat)
            response = await _post(http, stack.url, stack, delivery)
            statuses[response.status_code] += 1
            async with condition:
                busy.discard(delivery.chat)
                if not delivery.repeat:
                    done_first.add((delivery.chat, delivery.seq))
                condition.notify_all()

    async with httpx.AsyncClient(timeout=60) as http:
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
    return dict(statuses)


def replies(stack: Stack, chats: int) -> dict[int, list[int]]:
    """The sequence numbers each chat's replies carry, in the order they were sent."""
    out: dict[int, list[int]] = defaultdict(list)
    for text in sent_texts(stack):
        match = MARK.search(text)
        if match:
            out[int(match.group(1))].append(int(match.group(2)))
    return out


def run(stack: Stack, *, messages: int, chats: int, repeat_share: float = 0.2,
        concurrency: int = 16, timeout: float = 300.0,
        platforms: tuple[str, ...] = PLATFORMS) -> Report:
    lanes = plan(stack, messages=messages, chats=chats, repeat_share=repeat_share,
                 platforms=platforms)
    started = time.perf_counter()
    statuses = asyncio.run(deliver(stack, lanes, repeat_share=repeat_share,
                                   concurrency=concurrency))
    deliveries = sum(statuses.values())

    def answered() -> int:
        return sum(len(seqs) for seqs in replies(stack, chats).values())

    # Every message answered and nothing left to run or send (so no late double can follow);
    # past the timeout, the report counts what is missing.
    with suppress(WaitTimeout):
        wait_until(lambda: answered() >= messages and stack.finished(),
                   "every message answered and the stack idle", timeout=timeout,
                   seen=lambda: {"answered": answered(), "of": messages})
    seconds = time.perf_counter() - started
    got = replies(stack, chats)
    lost = doubled = out_of_order = 0
    for chat, lane in enumerate(lanes):
        seqs = got.get(chat, [])
        expected = [d.seq for d in lane]
        lost += len(set(expected) - set(seqs))
        doubled += len(seqs) - len(set(seqs))
        out_of_order += sum(1 for a, b in itertools.pairwise(seqs) if b < a)
    retried = stack.rt.store.db.scalar("SELECT count(*) FROM deliveries WHERE attempts > 1")
    return Report(messages, deliveries, lost, doubled, out_of_order, seconds, statuses,
                  retried=int(retried or 0))
