"""Skill routing: does `iris skills search` (the prompt's L0 index) put the right skill on top?

    .venv/bin/python bench/skills_routing.py [--cli N] [--show-misses]

The library is the 113 skills in bench/data/skills/library plus the 5 bundled ones; every
phrasing in bench/data/skills/phrasings.json names the skill it should select. The first
phrasing of each skill is the "dev" half (the only one looked at while choosing the ranking's
weights), the rest are held out. Prints hit@1/3/5, how often the right skill is inside the
token-budgeted index, ranking latency, and the index's size in tokens (estimate and real BPE
counts) with 200 skills installed. ``--cli N`` also runs N phrasings through the real `iris
skills search --json` command and checks it returns the same ranking as the in-process call.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, summary

DATA = ROOT / "bench" / "data" / "skills"
EDGE_CORPUS = ROOT / "tests" / "core" / "skills" / "corpus"
TOKENIZERS = "litellm/litellm_core_utils/tokenizers"


def fresh_home() -> Path:
    home = Path(tempfile.mkdtemp(prefix="iris-bench-skills-"))
    for name in list(os.environ):
        if name.startswith("IRIS_"):
            del os.environ[name]
    os.environ["IRIS_HOME"] = str(home)
    return home


def bpe_counts(text: str) -> dict[str, int]:
    """Real token counts with tiktoken's encodings shipped inside litellm (no download)."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return {}
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(spec.origin).parent.parent / TOKENIZERS))
    try:
        import tiktoken

        return {name: len(tiktoken.get_encoding(name).encode(text))
                for name in ("cl100k_base", "o200k_base")}
    except Exception as exc:  # no tokenizer files: report the estimate only
        print(f"(no BPE tokenizer available: {exc})")
        return {}


def filler_skill(i: int) -> str:
    topics = ["invoices", "sensor data", "release notes", "onboarding", "backups", "podcasts",
              "recipes", "lab results", "tickets", "newsletters"]
    topic = topics[i % len(topics)]
    return (f"---\nname: team-routine-{i:03d}\ndescription: Runs the team's routine number {i} "
            f"for {topic}: gathers the inputs, checks them against last week's, and posts a "
            f"short summary. Use when someone asks for routine {i} or the {topic} round-up.\n"
            f"---\n\n# Routine {i}\n\n1. Gather.\n2. Compare.\n3. Post.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", type=int, default=5, help="phrasings to re-check via the CLI")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()

    home = fresh_home()
    from core.config import load_settings
    from core.skills.importer import import_skills
    from core.skills.index import index_for
    from core.skills.library import Change, SkillLibrary
    from core.store import open_store

    settings = load_settings()
    store = open_store(settings)
    library = SkillLibrary(store, settings)
    user = store.users.for_account("http:bench")
    started = time.perf_counter()
    report = import_skills(library, user, str(DATA / "library"))
    took = time.perf_counter() - started
    assert not report.refused, [(i.path, i.reasons) for i in report.refused]
    total = len(library.entries(user))
    print(f"library: {len(report.loaded)} imported + {total - len(report.loaded)} bundled = "
          f"{total} skills (import took {took:.2f} s, {took / len(report.loaded) * 1000:.1f} "
          "ms per skill)")

    phrasings: dict[str, list[str]] = json.loads((DATA / "phrasings.json").read_text())
    names = {e.name for e in library.entries(user)}
    assert set(phrasings) <= names, set(phrasings) - names
    cases = [(name, text, i) for name, texts in phrasings.items()
             for i, text in enumerate(texts)]
    ranks: list[tuple[str, str, int, int, bool]] = []
    times = []
    budget = settings.skills_index_tokens
    for name, text, which in cases:
        t0 = time.perf_counter()
        view = index_for(library, user, text)
        times.append(time.perf_counter() - t0)
        order = [r.entry.name for r in view.shown]
        full = order + [r for r in sorted(names) if r not in order]
        ranks.append((name, text, which, full.index(name) + 1, name in order))

    def rates(rows: list[tuple[str, str, int, int, bool]], label: str) -> None:
        n = len(rows)
        hit = {k: sum(r[3] <= k for r in rows) / n for k in (1, 3, 5)}
        listed = sum(r[4] for r in rows) / n
        print(f"{label:<22} n={n:<4} hit@1 {hit[1]:.1%}  hit@3 {hit[3]:.1%}  "
              f"hit@5 {hit[5]:.1%}  in the {budget}-token index {listed:.1%}")

    print(f"\nrouting over {total} skills, {len(cases)} phrasings ({len(phrasings)} skills):")
    rates(ranks, "all phrasings")
    rates([r for r in ranks if r[2] == 0], "dev (1st of each)")
    rates([r for r in ranks if r[2] == 1], "held out (2nd)")
    rates([r for r in ranks if r[2] == 2], "fresh (3rd)")
    rates([r for r in ranks if r[2] > 0], "held out + fresh")
    print(f"ranking + index build per message: {summary(times)}")
    misses = [r for r in ranks if r[3] > 3]
    if args.show_misses or misses:
        print(f"\nmisses at 3 ({len(misses)}):")
        for name, text, _, rank, _ in misses:
            top = [r.entry.name for r in index_for(library, user, text).shown[:3]]
            print(f"  #{rank:<3} {name:<26} {text!r}\n        top 3: {', '.join(top)}")

    if args.cli:
        env = {**os.environ, "USER": "bench"}
        for _name, text, _ in cases[: args.cli]:
            out = subprocess.run(
                [sys.executable, "-m", "local_dev.cli", "skills", "search", text, "--json",
                 "--user", "http:bench"], cwd=ROOT, env=env, capture_output=True, text=True,
                check=True)
            cli_order = [s["name"] for s in json.loads(out.stdout)["skills"]]
            assert cli_order == [r.entry.name for r in index_for(library, user, text).shown]
        print(f"\n`iris skills search --json` gave the same ranking for {args.cli} phrasings")

    edge = import_skills(library, user, str(EDGE_CORPUS))
    have = len(library.entries(user))
    for i in range(max(0, 200 - have)):
        library.apply(user, f"team-routine-{i:03d}", lambda _, i=i: Change(
            provenance="user", action="create", replace_all=True,
            write={"SKILL.md": filler_skill(i).encode()}))
    installed = library.entries(user)[:200]
    from core.skills.index import select

    sizes = []
    for _name, text, _ in cases:
        view = select(installed, text, budget)
        sizes.append((view.tokens, len(view.shown), view.text))
    worst = max(sizes, key=lambda s: s[0])
    real = bpe_counts(worst[2])
    print(f"\nL0 index with {len(installed)} skills installed ({len(edge.loaded)} from the "
          f"edge-case corpus, {max(0, 200 - have)} filler): budget {budget} tokens")
    print(f"  listed skills per message: min {min(s[1] for s in sizes)}, "
          f"max {max(s[1] for s in sizes)}")
    print(f"  estimated tokens: max {worst[0]}, mean {sum(s[0] for s in sizes) / len(sizes):.0f}")
    for encoding, count in real.items():
        print(f"  largest index measured with {encoding}: {count} tokens")
    store.close()
    print(f"\n(state in {home})")


if __name__ == "__main__":
    main()
