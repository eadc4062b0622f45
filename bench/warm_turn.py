"""Warm turn overhead, excluding model time, with 100k messages stored.

One process, store on a real libSQL file, the local dispatcher and an in-process scripted model
that answers instantly (one tool call every 4th turn, so the tool path is in the mix). Each sample
is ingress (user lookup, inbox insert, dispatch) → lease → session → prompt with a 200-message
history → model → tools → commit → completion signal. After-turn work (embedding the new
messages for search) runs after the reply and is not counted; side-model reviews and titles are
model time and are off.

Run: .venv/bin/python bench/warm_turn.py [--messages 100000] [--turns 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

from _common import summary

from core.messages import InboundMessage


def populate(store, total: int) -> str:
    """``total`` messages over many users and sessions; returns the measured user's id."""
    db = store.db
    users, sessions_per_user = max(1, total // 400), 4
    per_session = max(1, total // (users * sessions_per_user))
    at = time.time() - 86400
    target = store.users.for_account("http:bench")
    session = store.sessions.start(target, "http:bench", "http", at=at)
    with db.transaction():
        for u in range(users):
            user = target if u == 0 else store.users.for_account(f"http:user{u}")
            for s in range(sessions_per_user):
                sid = session.id if (u == 0 and s == 0) else f"ses_bench_{u}_{s}"
                if sid != session.id:
                    db.execute(
                        "INSERT INTO sessions (id, user_id, chat_key, platform, started_at,"
                        " last_active_at, ended_at) VALUES (?, ?, ?, 'http', ?, ?, ?)",
                        (sid, user, f"http:user{u}", at, at, at),
                    )
                rows = [
                    (user, sid, "user" if i % 2 == 0 else "assistant",
                     f"message {i} about topic {i % 97} in session {s} of user {u}", at)
                    for i in range(per_session)
                ]
                db._conn.executemany(
                    "INSERT INTO messages (user_id, session_id, role, content, created_at)"
                    " VALUES (?, ?, ?, ?, ?)", rows,
                )
    db.execute("UPDATE sessions SET last_active_at = ? WHERE id = ?", (time.time(), session.id))
    return target


async def run(total: int, turns: int) -> None:
    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-bench-")
    from pydantic import SecretStr

    from core.config import load_settings
    from functions.dispatch import LocalDispatcher
    from functions.ingress import receive
    from functions.runtime import compose
    from iris_testing.scripted_model import FixedRouter, ScriptedModel, call, tool_calls

    # Reviews and titles are side-model calls (model time), run after the reply: off here.
    settings = load_settings().model_copy(update={
        "api_key": SecretStr("k"), "session_titles": False, "memory_review_every": 0,
        "memory_review_at_session_end": False, "skill_review_min_tool_calls": 0,
    })
    model = ScriptedModel()
    dispatcher = LocalDispatcher()
    rt = compose(settings, dispatcher=dispatcher, router=FixedRouter(model))
    started = time.perf_counter()
    populate(rt.store, total)
    stored = rt.store.db.scalar("SELECT count(*) FROM messages")
    print(f"populated {stored} messages in {time.perf_counter() - started:.1f} s")

    samples = []
    for i in range(turns + 20):
        if i % 4 == 0:
            model.then(tool_calls(call("clock", timezone="UTC")), "done")
        else:
            model.then("done")
        message = InboundMessage(platform="http", chat_id="bench", account="http:bench",
                                 platform_message_id=f"b{i}", text=f"turn {i}")
        t0 = time.perf_counter()
        received = await receive(rt, message)
        done = rt.notifier.watch(received.entry_id)
        await done.wait()
        elapsed = time.perf_counter() - t0
        rt.notifier.forget(received.entry_id)
        await dispatcher.idle()  # after-turn work (embedding the new messages) is not counted
        assert rt.store.inbox.get(received.user_id, received.entry_id).status == "done"
        if i >= 20:
            samples.append(elapsed)
    print(f"warm turn overhead (model time excluded), {stored} messages stored: "
          f"{summary(samples)}; target p50 <= 15 ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    asyncio.run(run(args.messages, args.turns))


if __name__ == "__main__":
    main()
