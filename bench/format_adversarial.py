"""Reply formatting on adversarial markup: the CPU time to render and split (Telegram, Slack,
WhatsApp, Discord: the senders' ``parts``) or compose (email: the message with its HTML part) a
reply of 8, 16, 32 and 64 KB that repeats one piece of unclosed or nested markup, plus the
event loop's longest stall while a 64 KB reply is formatted through ``core.platforms.offload``.

``--before REF`` measures the tree at git ``REF`` too (extracted to a temporary directory and
run in a child process), stopping a shape at the first size past ``--cap`` seconds.

Run: .venv/bin/python bench/format_adversarial.py [--before 2b66c43] [--cap 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = [8, 16, 32, 64]
SHAPES = {"![": "![", "[": "[", "[[[(": "[[[(", "*_": "*_", "``a`": "``a`"}


def formatters() -> dict[str, object]:
    from core.platforms.discord import DiscordSender
    from core.platforms.mail import EmailSender, SmtpServer
    from core.platforms.slack import SlackSender
    from core.platforms.telegram import TelegramSender
    from core.platforms.whatsapp import WhatsAppSender

    mail = EmailSender(SmtpServer("127.0.0.1", 25, implicit_tls=False), "iris@example.net")
    return {
        "telegram": TelegramSender("7000001:t").parts,
        "slack": SlackSender("xoxb-t").parts,
        "whatsapp": WhatsAppSender("t", "100").parts,
        "discord": DiscordSender("t", "1").parts,
        "email": lambda text: mail.compose({"to": "ada@example.com"}, text).as_bytes(),
    }


def measure(cap: float) -> None:
    for platform, format_ in formatters().items():
        for name, piece in SHAPES.items():
            cells = []
            for kb in SIZES:
                text = (piece * (kb * 1024 // len(piece) + 1))[:kb * 1024]
                started = time.thread_time()
                format_(text)  # type: ignore[operator]
                seconds = time.thread_time() - started
                cells.append(f"{seconds:8.3f}")
                if seconds > cap:
                    cells += ["       -"] * (len(SIZES) - len(cells))
                    break
            print(f"{platform:9} {name!r:8} " + " ".join(cells), flush=True)


async def loop_stall() -> tuple[float, int]:
    """Longest gap between 1 ms ticks of the loop while a 64 KB reply is formatted, and the
    number of ticks meanwhile."""
    from core.platforms.offload import formatted
    from core.platforms.telegram import TelegramSender

    ticks: list[float] = []
    loop = asyncio.get_running_loop()

    async def tick() -> None:
        while True:
            ticks.append(loop.time())
            await asyncio.sleep(0.001)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.01)
    start = len(ticks)
    await formatted(TelegramSender("7000001:t").parts, "![" * 32768)
    during = [*ticks[start - 1:], loop.time()]
    ticker.cancel()
    return max(b - a for a, b in pairwise(during)), len(during) - 2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="a git ref to measure too, e.g. 2b66c43")
    parser.add_argument("--cap", type=float, default=20.0)
    parser.add_argument("--only-measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    header = f"{'platform':9} {'piece':8} " + " ".join(f"{kb:>5} KB" for kb in SIZES)
    if args.only_measure:
        measure(args.cap)
        return
    sys.path.insert(0, str(ROOT))
    if args.before:
        with tempfile.TemporaryDirectory() as tree:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "core"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
            print(f"before ({args.before}), CPU seconds\n{header}", flush=True)
            subprocess.run([sys.executable, __file__, "--only-measure", "--cap", str(args.cap)],
                           env={**os.environ, "PYTHONPATH": tree}, cwd=tree, check=True)
    print(f"after (this tree), CPU seconds\n{header}", flush=True)
    measure(args.cap)
    stall, ticks = asyncio.run(loop_stall())
    print(f"64 KB '![' to Telegram through offload: longest loop stall {stall * 1000:.1f} ms, "
          f"{ticks} loop ticks while it was formatted")


if __name__ == "__main__":
    main()
