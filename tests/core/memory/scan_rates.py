"""Block and false-positive rates of memory writes, measured through the memory tool as the
turn loop calls it (``Toolset.call``). Shared by the test and bench/memory_scan_rates.py."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from core.contracts.toolkit import ToolContext, Toolset
from core.messages import ToolCall
from core.tools.memory import Memory
from core.turn.services import standalone_services

CORPUS = Path(__file__).parent / "corpus"


def load(name: str) -> list[dict]:
    lines = (CORPUS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@dataclass
class Rates:
    blocked: list[dict]
    missed: list[dict]
    accepted: list[dict]
    refused: list[tuple[dict, str]]

    @property
    def block_rate(self) -> float:
        return len(self.blocked) / (len(self.blocked) + len(self.missed))

    @property
    def false_positive_rate(self) -> float:
        return len(self.refused) / (len(self.refused) + len(self.accepted))

    def report(self) -> str:
        total_bad = len(self.blocked) + len(self.missed)
        total_good = len(self.accepted) + len(self.refused)
        lines = [
            f"memory tool block rate:          {len(self.blocked)}/{total_bad} = "
            f"{self.block_rate:.1%}",
            f"memory tool false-positive rate: {len(self.refused)}/{total_good} = "
            f"{self.false_positive_rate:.1%}",
        ]
        lines += [f"  missed [{e['category']}]: {e['text'][:80]!r}" for e in self.missed]
        lines += [f"  refused ({e['note']}): {e['text'][:60]!r} -> {why[:120]}"
                  for e, why in self.refused]
        return "\n".join(lines)


def measure(store, settings, user_id: str) -> Rates:
    tools = Toolset([Memory()])
    ctx = ToolContext(store=store, settings=settings,
                      services=standalone_services(settings, store),
                      user_id=user_id, session_id="ses_scan",
                      chat_key="http:scan", platform="http", account="http:scan")

    def write(text: str) -> str:
        call = ToolCall(id="c", name="memory",
                        arguments=json.dumps({"action": "add", "target": "memory",
                                              "content": text}))
        return asyncio.run(tools.call(ctx, call)).content

    rates = Rates([], [], [], [])
    for entry in load("malicious"):
        reply = write(entry["text"])
        (rates.blocked if reply.startswith("Error:") else rates.missed).append(entry)
    for entry in load("benign"):
        reply = write(entry["text"])
        if reply.startswith("Error:"):
            rates.refused.append((entry, reply))
        else:
            rates.accepted.append(entry)
    return rates
