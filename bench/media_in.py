"""Files in: what reading a large mail and downloading a large file cost.

- parsing an inbound mail (``read_rfc822``, run in a thread by the webhook) with a 19 MB PDF
  attachment (the largest kept) and with a 21 MB one (refused);
- downloading a 19 MB WhatsApp document through the sender (Graph API lookup + capped stream)
  from the fake Graph API on loopback, and refusing a 21 MB one.

    .venv/bin/python bench/media_in.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.intake.documents import DocumentRefused
from core.platforms.email_inbound import read_rfc822
from core.platforms.whatsapp import WhatsAppSender
from iris_testing.mail_inbound import raw_mail
from iris_testing.server import serve
from iris_testing.whatsapp_api import FakeWhatsApp

MB = 1024 * 1024


def timed(fn, runs: int) -> tuple[float, float]:
    """(median seconds over ``runs``, peak MB of Python allocations in one more run: tracing
    slows the code down, so it is not timed)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / MB
    tracemalloc.stop()
    return statistics.median(times), peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    for size in (19, 21):
        pdf = b"%PDF-1.4\n" + b"0" * (size * MB)
        raw = raw_mail("see attached", attachments=[("big.pdf", pdf, "application/pdf")])
        seconds, peak = timed(lambda raw=raw: read_rfc822(raw), runs)
        kept = read_rfc822(raw).attachments[0].data is not None
        print(f"parse a {len(raw) / MB:.1f} MB mail ({size} MB attachment, "
              f"{'kept' if kept else 'refused'}): median {seconds:.2f} s, peak {peak:.0f} MB")

    wa = FakeWhatsApp(token="t")
    with serve(wa.app) as server:
        sender = WhatsAppSender("t", wa.phone_number_id, f"{server.url}/v23.0")
        for size in (19, 21):
            wa.add_media(f"m{size}", b"%PDF-1.4\n" + b"0" * (size * MB), "application/pdf")

            def fetch(size: int = size) -> None:
                with contextlib.suppress(DocumentRefused):
                    asyncio.run(sender.download(f"m{size}"))

            seconds, peak = timed(fetch, runs)
            print(f"WhatsApp download of a {size} MB document: median {seconds:.2f} s, "
                  f"peak {peak:.0f} MB (fake on loopback, same process)")


if __name__ == "__main__":
    main()
