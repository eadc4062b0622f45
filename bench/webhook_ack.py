"""Webhook ack latency: request → 200 for ``POST /telegram/webhook``, ``POST /slack/events``,
``POST /whatsapp/webhook``, ``POST /discord/interactions``, ``POST /email/inbound``,
``POST /line/webhook``, ``POST /sms/webhook`` and ``PUT /_matrix/app/v1/transactions/{txnId}``.

The app is the serverless web container's shape (``_apps:ack_only_app``): the worker is handed
off (on Modal it is spawned in another container), so the figures are what the platform waits
for: verify, parse, access check, record in the inbox, dispatch, answer.

- warm, in-process: the ASGI app called directly (httpx's ASGI transport), many messages from
  many chats after a warm-up;
- warm, loopback: the same through uvicorn on 127.0.0.1 over a kept-alive connection;
- cold: a fresh ``uvicorn --factory`` process per run, one webhook sent as soon as the port
  accepts; the time from spawning the process to the response's first byte.

Targets: warm p50 <= 5 ms in-process, cold <= 0.3 s.
Run: .venv/bin/python bench/webhook_ack.py [--n 500] [--runs 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from urllib.parse import urlencode

from _common import ROOT, connect_when_up, free_port, percentile, spawn, summary

TELEGRAM_SECRET = "bench-telegram-secret"
SLACK_SECRET = "bench-slack-secret"
WHATSAPP_SECRET = "bench-whatsapp-app-secret"
EMAIL_SECRET = "bench-email-secret"
LINE_SECRET = "bench-line-channel-secret"
TWILIO_TOKEN = "bench-twilio-token"
MATRIX_HS_TOKEN = "bench-matrix-hs-token"
PUBLIC_URL = "https://iris.bench.example"
_DISCORD = None


def discord() -> object:
    """One fake Discord (its key pair signs every interaction of the run)."""
    global _DISCORD
    if _DISCORD is None:
        from iris_testing.discord_api import FakeDiscord

        _DISCORD = FakeDiscord()
    return _DISCORD


def bench_env(home: str) -> dict[str, str]:
    from iris_testing.matrix_api import matrix_env
    from iris_testing.twilio_api import sms_env

    return {
        "IRIS_HOME": home, "IRIS_API_KEY": "bench-key",
        "IRIS_TELEGRAM_TOKEN": "7000001:bench", "IRIS_TELEGRAM_SECRET": TELEGRAM_SECRET,
        "IRIS_TELEGRAM_API_BASE": "http://127.0.0.1:9",
        "IRIS_SLACK_SIGNING_SECRET": SLACK_SECRET, "IRIS_SLACK_BOT_TOKEN": "xoxb-bench",
        "IRIS_SLACK_API_BASE": "http://127.0.0.1:9/api/",
        "IRIS_TELEGRAM_ACCESS": "open", "IRIS_SLACK_ACCESS": "open",
        "IRIS_WHATSAPP_TOKEN": "EAAG-bench", "IRIS_WHATSAPP_APP_SECRET": WHATSAPP_SECRET,
        "IRIS_WHATSAPP_PHONE_NUMBER_ID": "106540352242922",
        "IRIS_WHATSAPP_API_BASE": "http://127.0.0.1:9/v23.0", "IRIS_WHATSAPP_ACCESS": "open",
        "IRIS_DISCORD_PUBLIC_KEY": discord().public_key,  # type: ignore[attr-defined]
        "IRIS_DISCORD_API_BASE": "http://127.0.0.1:9/api/v10", "IRIS_DISCORD_ACCESS": "open",
        "IRIS_EMAIL_INBOUND_SECRET": EMAIL_SECRET, "IRIS_EMAIL_FROM": "iris@bench.example",
        "IRIS_EMAIL_SMTP_URL": "smtp://127.0.0.1:9", "IRIS_EMAIL_ACCESS": "open",
        "IRIS_LINE_CHANNEL_SECRET": LINE_SECRET, "IRIS_LINE_CHANNEL_ACCESS_TOKEN": "bench",
        "IRIS_LINE_API_BASE": "http://127.0.0.1:9", "IRIS_LINE_ACCESS": "open",
        **sms_env("http://127.0.0.1:9", TWILIO_TOKEN, PUBLIC_URL),
        **matrix_env("http://127.0.0.1:9", "bench-as", MATRIX_HS_TOKEN),
    }


Request = tuple[str, bytes, dict[str, str]]


def method_of(path: str) -> str:
    """Matrix homeservers PUT their transactions; every other platform POSTs."""
    return "PUT" if path.startswith("/_matrix/") else "POST"


def requests(n: int) -> dict[str, list[Request]]:
    from iris_testing.line_api import FakeLine
    from iris_testing.mail_inbound import raw_mail
    from iris_testing.matrix_api import FakeHomeserver
    from iris_testing.slack_api import FakeSlack
    from iris_testing.telegram_api import FakeTelegram
    from iris_testing.twilio_api import FakeTwilio
    from iris_testing.whatsapp_api import FakeWhatsApp

    telegram, slack, whatsapp = FakeTelegram(), FakeSlack(), FakeWhatsApp(token="")
    fake_discord = discord()
    tg: list[Request] = []
    sl: list[Request] = []
    wa: list[Request] = []
    dc: list[Request] = []
    em: list[Request] = []
    ln: list[Request] = []
    sm: list[Request] = []
    mx: list[Request] = []
    homeserver = FakeHomeserver(as_token="bench-as")
    twilio = FakeTwilio(auth_token=TWILIO_TOKEN)
    line = FakeLine(token="", channel_secret=LINE_SECRET)
    for i in range(n):
        body = json.dumps(line.webhook(line.message_event(
            f"hello {i}", user=f"U{i % 200:032x}"))).encode()
        ln.append(("/line/webhook", body, {"content-type": "application/json",
                                           **FakeLine.sign(body, LINE_SECRET)}))
        form = twilio.inbound(f"hello {i}", sender=f"+1555{i % 200:07d}")
        sm.append(("/sms/webhook", urlencode(form).encode(), {
            "content-type": "application/x-www-form-urlencoded",
            **FakeTwilio.sign(PUBLIC_URL + "/sms/webhook", form, TWILIO_TOKEN)}))
        event = homeserver.message_event(f"hello {i}", sender=f"@u{i % 200}:example.org",
                                         room=f"!r{i % 200}:example.org")
        mx.append((f"/_matrix/app/v1/transactions/{uuid.uuid4().hex}",
                   homeserver.transaction(event), {"content-type": "application/json",
                                                   "authorization": f"Bearer {MATRIX_HS_TOKEN}"}))
        body = json.dumps(whatsapp.message_payload(f"hello {i}",
                                                   wa_id=f"49151{i % 200:07d}")).encode()
        wa.append(("/whatsapp/webhook", body, {"content-type": "application/json",
                                               **FakeWhatsApp.sign(body, WHATSAPP_SECRET)}))
        body = json.dumps(fake_discord.interaction(  # type: ignore[attr-defined]
            "ask", {"text": f"hello {i}"}, user_id=str(80_000 + i % 200),
            channel_id=str(90_000 + i % 200))).encode()
        dc.append(("/discord/interactions", body, {
            "content-type": "application/json",
            **fake_discord.sign(body)}))  # type: ignore[attr-defined]
        em.append(("/email/inbound", raw_mail(f"hello {i}", sender=f"u{i % 200}@example.com"),
                   {"content-type": "message/rfc822", "authorization": f"Bearer {EMAIL_SECRET}"}))
        update = telegram.make_update(f"hello {i}", user_id=10_000 + i % 200)
        tg.append(("/telegram/webhook", json.dumps(update).encode(), {
            "content-type": "application/json",
            "x-telegram-bot-api-secret-token": TELEGRAM_SECRET}))
        event = slack.message_event(f"hello {i}", user=f"U{i % 200:05d}",
                                    channel=f"D{i % 200:05d}", channel_type="im")
        body = json.dumps(slack.event_payload(event)).encode()
        sl.append(("/slack/events", body, {"content-type": "application/json",
                                           **FakeSlack.sign(body, SLACK_SECRET)}))
    return {"telegram": tg, "slack": sl, "whatsapp": wa, "discord": dc, "email": em,
            "line": ln, "sms": sm, "matrix": mx}


async def in_process(n: int) -> dict[str, list[float]]:
    import httpx
    from _apps import ack_only_app

    app = ack_only_app()
    batches = requests(n + 50)
    out: dict[str, list[float]] = {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://iris") as client:
        for name, batch in batches.items():
            times = []
            for i, (path, body, headers) in enumerate(batch):
                start = time.perf_counter()
                response = await client.request(method_of(path), path, content=body,
                                                headers=headers)
                elapsed = time.perf_counter() - start
                assert response.status_code == 200, response.text
                if i >= 50:
                    times.append(elapsed)
            out[name] = times
    return out


def loopback(n: int) -> dict[str, list[float]]:
    import httpx
    from _apps import ack_only_app

    from iris_testing.server import serve

    batches = requests(n + 50)
    out: dict[str, list[float]] = {}
    with serve(ack_only_app()) as server, httpx.Client(base_url=server.url) as client:
        for name, batch in batches.items():
            times = []
            for i, (path, body, headers) in enumerate(batch):
                start = time.perf_counter()
                response = client.request(method_of(path), path, content=body,
                                          headers=headers)
                elapsed = time.perf_counter() - start
                assert response.status_code == 200, response.text
                if i >= 50:
                    times.append(elapsed)
            out[name] = times
    return out


def cold(path: str, body: bytes, headers: dict[str, str], method: str = "POST") -> float:
    port = free_port()
    home = tempfile.mkdtemp(prefix="iris-bench-")
    env = {**os.environ, **bench_env(home), "PYTHONPATH": f"{ROOT}:{ROOT / 'bench'}"}
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    raw = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}"
           f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    start = time.perf_counter()
    child = spawn([sys.executable, "-m", "uvicorn", "--factory", "_apps:ack_only_app",
                   "--port", str(port), "--log-level", "warning"], env)
    try:
        with connect_when_up(port, start + 60) as sock:
            sock.sendall(raw)
            first = sock.recv(64)
            elapsed = time.perf_counter() - start
            assert first.startswith(b"HTTP/1.1 200"), first
        return elapsed
    finally:
        child.terminate()
        child.wait(timeout=10)


def import_costs() -> str:
    code = (
        "import time, json; t = time.perf_counter(); import telegram; "
        "i = time.perf_counter() - t; from iris_testing.telegram_api import FakeTelegram; "
        "u = FakeTelegram().make_update('hi'); t = time.perf_counter(); "
        "[telegram.Update.de_json(u, None) for _ in range(1000)]; "
        "d = (time.perf_counter() - t) / 1000; "
        "from core.platforms.telegram_inbound import TgUpdate; raw = json.dumps(u); "
        "t = time.perf_counter(); [TgUpdate.model_validate_json(raw) for _ in range(1000)]; "
        "p = (time.perf_counter() - t) / 1000; "
        "print(f'{i*1000:.0f} {d*1e6:.0f} {p*1e6:.0f}')"
    )
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
        runs.append([float(x) for x in out.stdout.split()])
    imp = percentile([r[0] for r in runs], 50)
    de_json = percentile([r[1] for r in runs], 50)
    ours = percentile([r[2] for r in runs], 50)
    return (f"python-telegram-bot: import {imp:.0f} ms (cold, median of 5), "
            f"Update.de_json {de_json:.0f} us/update; Iris' pydantic TgUpdate "
            f"{ours:.0f} us/update (what the ack path uses)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    os.environ.update(bench_env(tempfile.mkdtemp(prefix="iris-bench-")))

    warm = asyncio.run(in_process(args.n))
    for name, times in warm.items():
        print(f"warm in-process ack, {name}: {summary(times)} (target p50 <= 5 ms)")
    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-bench-")
    for name, times in loopback(args.n).items():
        print(f"warm loopback (uvicorn) ack, {name}: {summary(times)}")
    from iris_testing.slack_api import FakeSlack

    base = [cold("/healthz", b"", {}, method="GET") for _ in range(args.runs)]
    print(f"cold process -> GET /healthz (the app alone, for comparison): "
          f"p50 {percentile(base, 50):.3f} s, max {max(base):.3f} s")
    for name, batch in requests(1).items():
        path, body, headers = batch[0]
        runs = []
        for _ in range(args.runs):
            if name == "slack":  # a fresh timestamp for each run
                headers = {"content-type": "application/json",
                           **FakeSlack.sign(body, SLACK_SECRET)}
            elif name in ("discord", "email", "line", "sms", "matrix"):  # a new one each run
                path, body, headers = requests(1)[name][0]
            runs.append(cold(path, body, headers, method=method_of(path)))
        print(f"cold process -> ack, {name}: p50 {percentile(runs, 50):.3f} s, "
              f"max {max(runs):.3f} s (n={len(runs)}; target <= 0.3 s)")
    print(import_costs())


if __name__ == "__main__":
    main()
