"""Faults injected into the cloud path and what became of the turns they hit (issue 18).

Each run drives real turns through real HTTP and the real client libraries, injects one kind of
fault at the fake's or the proxy's side, and counts at the far end (the fake platform, the
scripted model, the database): shared by tests/test_e2e_faults*.py (few turns, asserted) and
bench/cloud_faults.py (more turns, printed as the table in docs/benchmarks.md). The store-side
runs are here; the platform, model and spawn runs in ``fault_runs_platforms``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai

from core.config import load_settings
from iris_testing.fault_proxy import ProxyRule, fault_proxy
from iris_testing.llm_server import ScriptedLLM, ToolCalls
from iris_testing.llm_server import ToolCall as ScriptedCall
from iris_testing.server import serve

API_KEY = "fault-key"
QUESTION = re.compile(r"question (\d+)")


@dataclass
class FaultOutcome:
    fault: str
    injected: int  # faults the fake or the proxy counted
    turns: int
    answered_once: int  # the right answer, received once
    lost: int  # no answer at all
    doubled: int  # answered (or stored) more than once
    told_failed: int  # turns that finally failed and said so plainly
    swept: int = 0  # turns or replies finished by the sweeper
    model_calls: int | None = None  # the turns' calls to the model server (None: not counted)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return (self.lost, self.doubled) == (0, 0) and (
            self.answered_once + self.told_failed == self.turns)

    HEADER = ("| Fault | Injected | Turns | Answered once | Told it failed | Lost | Doubled "
              "| Finished by the sweeper | Model calls |")

    def row(self) -> str:
        return (f"| {self.fault} | {self.injected} | {self.turns} | {self.answered_once} | "
                f"{self.told_failed} | {self.lost} | {self.doubled} | {self.swept} | "
                f"{'–' if self.model_calls is None else self.model_calls} |")


@contextmanager
def emulator(home: Path, llm: ScriptedLLM, **env: str) -> Iterator[tuple[Any, openai.OpenAI]]:
    """The emulator's app (HTTP API, in-process worker, a ticker every second running the
    sweeper) on loopback, its model ``llm``."""
    from local_dev.emulator import build_emulator

    with serve(llm.app) as model:
        settings = load_settings({
            "IRIS_HOME": str(home), "IRIS_MODEL": "openai/scripted-model",
            "IRIS_MODEL_API_BASE": f"{model.url}/v1", "IRIS_MODEL_API_KEY": "sk-scripted",
            "IRIS_API_KEY": API_KEY, "IRIS_MODEL_RETRIES": "0", "IRIS_SANDBOX_ISOLATION": "none",
            **env})
        dev = build_emulator(settings)
        try:
            with serve(dev.app(tick_seconds=1.0)) as iris:
                yield dev.runtime, openai.OpenAI(base_url=f"{iris.url}/v1", api_key=API_KEY,
                                                 max_retries=0, timeout=120)
        finally:
            dev.runtime.close()


def _ask(client: openai.OpenAI, n: int, users: int = 4) -> tuple[str | None, str | None]:
    """(answer, error text) of turn ``n`` over the HTTP API, from user ``n % users``."""
    try:
        answer = client.chat.completions.create(
            model="iris", messages=[{"role": "user", "content": f"question {n}"}],
            user=f"user{n % users}")
    except openai.APIStatusError as exc:
        return None, str(exc)
    return answer.choices[0].message.content, None


def _number(body: dict[str, Any]) -> int:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    found = QUESTION.findall(str(users[-1].get("content") if users else ""))
    return int(found[-1]) if found else -1


def _tally(fault: str, injected: int, answers: list[tuple[str | None, str | None]],
           expected: list[str], stored: dict[str, int], model_calls: int,
           detail: str = "") -> FaultOutcome:
    answered = sum(1 for (got, _), want in zip(answers, expected, strict=True) if got == want)
    told = sum(1 for got, error in answers if got is None and error)
    doubled = sum(1 for count in stored.values() if count > 1)
    lost = len(answers) - answered - told  # no answer, or a wrong one
    return FaultOutcome(fault, injected, len(answers), answered, lost, doubled, told,
                        model_calls=model_calls, detail=detail)


def turn_calls(llm: ScriptedLLM) -> int:
    """Model calls made by turns (they offer tools; titles and reviews do not)."""
    return sum(1 for body in llm.requests if body.get("tools"))


def _reruns(rt: Any) -> int:
    """Turns that ran more than once (a worker gave up on them; the sweeper ran them again)."""
    return int(rt.store.db.scalar("SELECT count(*) FROM inbox WHERE attempts > 1"))


def _stored_questions(rt: Any) -> dict[str, int]:
    rows = rt.store.db.query(
        "SELECT content, count(*) AS n FROM messages WHERE role = 'user' GROUP BY content")
    return {row["content"]: row["n"] for row in rows}


def db_drops(home: Path, server_url: str, db_url: str, token: str, *, where: str, turns: int,
             rate: float, seed: int = 1) -> FaultOutcome:
    """Chat turns while the Hrana server drops the connection (before or after running the
    request) on a ``rate`` of the turn's message writes inside the transaction
    (``where="transaction"``) or of its COMMITs (``where="commit"``)."""
    match = "INSERT INTO messages" if where == "transaction" else '"COMMIT;"'
    llm = ScriptedLLM()
    llm.handler = lambda body: f"answer {_number(body)}"
    with emulator(home, llm, IRIS_DB_URL=db_url, IRIS_DB_AUTH_TOKEN=token) as (rt, client):
        rules = [{"kind": kind, "rate": rate / 2, "match": match}
                 for kind in ("drop_before", "drop_after")]
        httpx.post(f"{server_url}/_fake/reset").raise_for_status()
        httpx.post(f"{server_url}/_fake/faults",
                   json={"rules": rules, "seed": seed}).raise_for_status()
        try:
            answers = [_ask(client, n) for n in range(turns)]
        finally:
            httpx.post(f"{server_url}/_fake/faults", json={"rules": []}).raise_for_status()
        stats = httpx.get(f"{server_url}/_fake/stats").json()
        counters = rt.store.db.remote_counters()
        stored = _stored_questions(rt)
        swept = _reruns(rt)
    injected = stats.get("fault_drop_before", 0) + stats.get("fault_drop_after", 0)
    detail = ", ".join(f"{k} {v}" for k, v in sorted(counters.items()) if v)
    name = "mid-transaction" if where == "transaction" else "on COMMIT"
    outcome = _tally(f"database connection dropped {name} ({rate:.0%})", injected, answers,
                     [f"answer {n}" for n in range(turns)], stored, turn_calls(llm), detail)
    outcome.swept = swept
    return outcome


SKILL = "---\nname: {name}\ndescription: {topic}\n---\n# Task {n}\n\n1. {topic}.\n"
TOPICS = ("Brew green tea at 80 degrees", "File travel expenses before Friday",
          "Restart the staging build server", "Water the ferns on the balcony",
          "Renew the passport online", "Tune the bicycle gears", "Back up photos to disk",
          "Order printer toner", "Book the dentist", "Defrost the freezer",
          "Rotate the API keys", "Plan the quarterly budget", "Sharpen kitchen knives",
          "Replace smoke alarm batteries", "Review pull requests", "Practise Spanish verbs")


def _skill_script(body: dict[str, Any]) -> ToolCalls | str:
    """Ask for a skill to be created, then report the tool's answer as it came back."""
    n = _number(body)
    last = body["messages"][-1]
    if last.get("role") != "tool":
        name = f"task-{n}"
        return ToolCalls((ScriptedCall("skill_manage", {
            "action": "create", "name": name,
            "content": SKILL.format(name=name, n=n, topic=TOPICS[n % len(TOPICS)])}),))
    result = str(last.get("content"))
    return f"answer {n}" if "error" not in result.lower() else f"could not save: {result}"


def s3_faults(home: Path, moto_url: str, bucket: str, *, turns: int, rate: float,
              seed: int = 1) -> FaultOutcome:
    """Turns that save a skill (S3 puts through the proxy) while the proxy answers 503 SlowDown
    to ``rate`` of all S3 requests and lets ``rate`` of the PUTs (and the first version
    manifest's) run but never answers them (the client times out after 1 s: the write happened,
    boto3 cannot know). Needs AWS test credentials in the environment."""
    from core.skills.library import SkillLibrary

    llm = ScriptedLLM()
    llm.handler = _skill_script
    with fault_proxy(moto_url) as proxy, emulator(
            home, llm, IRIS_OBJECTS_URL=f"s3://{bucket}/iris", IRIS_S3_ENDPOINT_URL=proxy.url,
            IRIS_S3_REGION="us-east-1", IRIS_S3_TIMEOUT="1") as (rt, client):
        proxy.inject(ProxyRule("hang_after", match="^PUT .*/versions/", times=1),  # a manifest
                     ProxyRule("fail", rate=rate, status=503),
                     ProxyRule("hang_after", match="^PUT ", rate=rate), seed=seed)
        answers = [_ask(client, n, users=turns) for n in range(turns)]  # a skill per user
        proxy.inject()
        counts = proxy.counts()
        library = SkillLibrary(rt.store, rt.settings)
        stored: dict[str, int] = {}
        for n in range(turns):
            user = rt.store.users.resolve(f"http:user{n}")
            head = library.head(user, f"task-{n}")
            if head is not None and f"Task {n}" in head.text():
                stored[f"task-{n}"] = head.entry.version  # a second version would be a double
        told = [(None, got) if got and got.startswith("could not save") else (got, err)
                for got, err in answers]
    missing = [n for n in range(turns) if f"task-{n}" not in stored and answers[n][0] ==
               f"answer {n}"]
    outcome = _tally("S3 503 SlowDown / PUT answer never arrives", counts.get("fail", 0) +
                     counts.get("hang_after", 0), told, [f"answer {n}" for n in range(turns)],
                     stored, turn_calls(llm),
                     f"{counts.get('fail', 0)} × 503, {counts.get('hang_after', 0)} × timeout "
                     "after the write")
    outcome.lost += len(missing)  # answered "saved" but nothing is stored
    return outcome
