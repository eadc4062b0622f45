"""How many of Hermes Agent's own skills (a benign corpus of real public skills) the safety scan
refuses, and why: every file of every skill through ``core.skills.safety.scan_file``, as
``iris skills import`` scans them. The corpus stays where it is (../shared/corpora).

    .venv/bin/python bench/hermes_skills_scan.py [CORPUS_DIR]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from _common import ROOT

DEFAULT = ROOT.parent / "shared" / "corpora" / "hermes-skills"
if not DEFAULT.is_dir():
    DEFAULT = Path("/work/shared/corpora/hermes-skills")


def main() -> None:
    from core.skills.format import find_skill_dirs, load_skill_dir
    from core.skills.safety import scan_file

    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    skill_dirs = find_skill_dirs(corpus)
    files = flagged_files = 0
    refused: dict[str, list[str]] = {}
    size = 0
    started = time.perf_counter()
    for skill_dir in skill_dirs:
        _, paths = load_skill_dir(skill_dir)
        for rel in ["SKILL.md", *paths]:
            data = (skill_dir / rel).read_bytes()
            files += 1
            size += len(data)
            reason = scan_file(rel, data)
            if reason is not None:
                flagged_files += 1
                refused.setdefault(skill_dir.relative_to(corpus).as_posix(), []).append(reason)
    took = time.perf_counter() - started
    rate = len(refused) / len(skill_dirs)
    print(f"corpus: {corpus} ({len(skill_dirs)} skills, {files} files, {size / 1e6:.1f} MB)")
    print(f"skills refused by the safety scan: {len(refused)}/{len(skill_dirs)} = {rate:.1%} "
          f"({flagged_files} files)")
    categories = Counter(reason.split(": ", 1)[1].split(" (")[0] for reasons in refused.values()
                         for reason in reasons)
    for category, count in categories.most_common():
        print(f"  {count:3d} × {category}")
    for name, reasons in sorted(refused.items()):
        for reason in reasons:
            print(f"  {name}: {reason}")
    print(f"scan time: {took:.2f} s ({size / 1e6 / took:.2f} MB/s)")


if __name__ == "__main__":
    main()
