"""Warm webhook ack latency of the JWT-verified platforms: request → response for
``POST /teams/messages`` (Microsoft Teams) and ``POST /googlechat/events`` (Google Chat), with
``POST /telegram/webhook`` in the same run for comparison.

The app is the serverless web container's shape (``_apps:ack_only_app``: the worker handed
off), called in-process (httpx's ASGI transport). Each request carries its own RS256 token,
signed before the clock starts; the signing keys come from the fake Bot Framework / Google key
endpoints on loopback, fetched once during the warm-up and cached (as on a warm container).
Figures: verify the JWT, parse, access check, record in the inbox, dispatch, answer.

Run: .venv/bin/python bench/webhook_ack_jwt.py [--n 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time

from _common import summary

TELEGRAM_SECRET = "bench-telegram-secret"
WARM_UP = 50

Request = tuple[str, bytes, dict[str, str]]


def requests(n: int, teams: object, chat: object) -> dict[str, list[Request]]:
    from iris_testing.telegram_api import FakeTelegram

    telegram = FakeTelegram()
    out: dict[str, list[Request]] = {"telegram": [], "teams": [], "googlechat": []}
    for i in range(n):
        update = telegram.make_update(f"hello {i}", user_id=10_000 + i % 200)
        out["telegram"].append(("/telegram/webhook", json.dumps(update).encode(), {
            "content-type": "application/json",
            "x-telegram-bot-api-secret-token": TELEGRAM_SECRET}))
        activity = teams.activity(  # type: ignore[attr-defined]
            f"hello {i}", user=f"29:{i % 200}", conversation=f"a:{i % 200}")
        out["teams"].append(("/teams/messages", json.dumps(activity).encode(),
                             teams.headers()))  # type: ignore[attr-defined]
        event = chat.event(  # type: ignore[attr-defined]
            f"hello {i}", user=f"users/{i % 200}", space=f"spaces/AAAA{i % 200}")
        out["googlechat"].append(("/googlechat/events", json.dumps(event).encode(),
                                  chat.headers()))  # type: ignore[attr-defined]
    return out


async def in_process(batches: dict[str, list[Request]]) -> dict[str, list[float]]:
    import httpx
    from _apps import ack_only_app

    app = ack_only_app()
    out: dict[str, list[float]] = {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://iris") as client:
        for name, batch in batches.items():
            times = []
            for i, (path, body, headers) in enumerate(batch):
                start = time.perf_counter()
                response = await client.post(path, content=body, headers=headers)
                elapsed = time.perf_counter() - start
                assert response.status_code in (200, 202), response.text
                if i >= WARM_UP:
                    times.append(elapsed)
            out[name] = times
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    from iris_testing.googlechat_api import FakeGoogleChat
    from iris_testing.server import serve
    from iris_testing.teams_api import FakeTeams

    teams, chat = FakeTeams(), FakeGoogleChat()
    with serve(teams.app) as teams_server, serve(chat.app) as chat_server:
        teams.url, chat.url = teams_server.url, chat_server.url
        os.environ.update({
            "IRIS_HOME": tempfile.mkdtemp(prefix="iris-bench-"), "IRIS_API_KEY": "bench-key",
            "IRIS_TELEGRAM_TOKEN": "7000001:bench", "IRIS_TELEGRAM_SECRET": TELEGRAM_SECRET,
            "IRIS_TELEGRAM_API_BASE": "http://127.0.0.1:9", "IRIS_TELEGRAM_ACCESS": "open",
            **teams.env(), **chat.env()})
        batches = requests(args.n + WARM_UP, teams, chat)
        results = asyncio.run(in_process(batches))
    for name, times in results.items():
        print(f"warm in-process ack, {name}: {summary(times)}")


if __name__ == "__main__":
    main()
