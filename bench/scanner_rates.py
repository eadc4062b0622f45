"""Block rate, false-positive rate and speed of the security scanner on its test corpus.

    .venv/bin/python bench/scanner_rates.py
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.security import describe, scan_script, scan_text  # noqa: E402

CORPUS = ROOT / "tests" / "core" / "security" / "corpus"


def load(name: str) -> list[dict]:
    lines = (CORPUS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def scan(entry: dict):
    return (scan_script if entry.get("kind") == "script" else scan_text)(entry["text"])


def main() -> None:
    malicious, benign = load("malicious"), load("benign")

    missed = [e for e in malicious if e["category"] not in {f.category for f in scan(e)}]
    per_category = Counter(e["category"] for e in malicious)
    missed_per_category = Counter(e["category"] for e in missed)
    blocked = len(malicious) - len(missed)
    print(f"block rate:          {blocked}/{len(malicious)} = {blocked / len(malicious):.1%}")
    for category, total in sorted(per_category.items()):
        caught = total - missed_per_category[category]
        print(f"  {category:<20} {caught}/{total}")
    for entry in missed:
        print(f"  missed [{entry['category']}]: {entry['text'][:90]!r}")

    refused = [(e, scan(e)) for e in benign]
    refused = [(e, found) for e, found in refused if found]
    rate = len(refused) / len(benign)
    print(f"false-positive rate: {len(refused)}/{len(benign)} = {rate:.1%}")
    for entry, found in refused:
        print(f"  refused ({entry['note']}): {entry['text'][:70]!r} -> {describe(found)}")

    entries = malicious + benign
    chars = sum(len(e["text"]) for e in entries)
    rounds, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < 2.0:
        for entry in entries:
            scan(entry)
        rounds += 1
    scans = rounds * len(entries)
    print(
        f"speed:               {scans / elapsed:,.0f} scans/s "
        f"({rounds * chars / elapsed / 1e6:.2f} MB/s, mean entry {chars // len(entries)} chars)"
    )
    store = "\n§\n".join(e["text"] for e in benign if e.get("kind") != "script")[:2200]
    runs, started = 200, time.perf_counter()
    for _ in range(runs):
        scan_text(store)
    each = (time.perf_counter() - started) / runs
    print(f"full 2,200-char memory store re-scanned on load: {each * 1000:.2f} ms")


if __name__ == "__main__":
    main()
