"""Skill routing: does `iris skills search` (the prompt's L0 index) put the right skill on top?

    .venv/bin/python bench/skills_routing.py [--cli N] [--show-misses] [--tune]
    .venv/bin/python bench/skills_routing.py --hermes [--show-misses] [--hermes-only]

``--hermes`` evaluates over real public skills instead (``bench/_hermes_routing.py``: Hermes
Agent's published skills plus this library, ~300 skills; phrasings written before any ranking
ran, dev / held-out by hashing; words only next to hybrid, and the lexicon ablation).

The library is the 113 skills in bench/data/skills/library plus the 5 bundled ones. Every
phrasing names the skill it should select. phrasings.json holds three per skill: the first is
the "dev" split (the only one looked at while choosing the BM25F weights, the concept groups
and the fusion weights), the second "held out", the third "fresh" (written after the BM25F
ranking was frozen); blind.json holds phrasings in other styles (situations, indirect requests,
typos, other languages) written after the fusion weights were frozen.

Prints hit@1/3/5 of words alone (BM25F) and of the hybrid (BM25F fused with MiniLM similarity)
per split, how often the right skill is inside the token-budgeted index, ranking latency, the
cost of computing skill vectors, and the index's size in tokens with 200 skills installed.
``--tune`` shows the fusion-weight search on the dev split (and only there). ``--cli N`` runs N
phrasings through the real `iris skills search --json` and checks it gives the same ranking.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from _common import ROOT, summary

DATA = ROOT / "bench" / "data" / "skills"
EDGE_CORPUS = ROOT / "tests" / "core" / "skills" / "corpus"
TOKENIZERS = "litellm/litellm_core_utils/tokenizers"
SPLITS = ("dev", "held-out", "fresh")


@dataclass(frozen=True)
class Case:
    skill: str
    text: str
    split: str
    style: str = ""


@dataclass(frozen=True)
class Result:
    case: Case
    rank: int
    listed: bool


def fresh_home() -> Path:
    home = Path(tempfile.mkdtemp(prefix="iris-bench-skills-"))
    for name in list(os.environ):
        if name.startswith("IRIS_"):
            del os.environ[name]
    os.environ["IRIS_HOME"] = str(home)
    return home


def load_cases() -> list[Case]:
    phrasings: dict[str, list[str]] = json.loads((DATA / "phrasings.json").read_text())
    cases = [Case(skill, text, SPLITS[i]) for skill, texts in phrasings.items()
             for i, text in enumerate(texts)]
    blind = json.loads((DATA / "blind.json").read_text())
    return cases + [Case(b["skill"], b["text"], "blind", b["style"]) for b in blind]


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


def evaluate(cases: list[Case], names: list[str], shown: Callable[[str], list[str]]
             ) -> tuple[list[Result], list[float]]:
    results, times = [], []
    for case in cases:
        started = time.perf_counter()
        order = shown(case.text)
        times.append(time.perf_counter() - started)
        full = order + [n for n in names if n not in order]
        results.append(Result(case, full.index(case.skill) + 1, case.skill in order))
    return results, times


def rates(rows: list[Result]) -> str:
    n = len(rows)
    if not n:
        return "-"
    hit = [sum(r.rank <= k for r in rows) / n for k in (1, 3, 5)]
    listed = sum(r.listed for r in rows) / n
    return " ".join(f"{v:6.1%}" for v in (*hit, listed))


def print_table(words: list[Result], hybrid: list[Result], budget: int) -> None:
    def of(split: str, style: str | None = None) -> Callable[[Case], bool]:
        """Whether a case is in ``split`` (and, given one, phrased in ``style``)."""
        return lambda c: c.split == split and (style is None or c.style == style)

    groups: list[tuple[str, Callable[[Case], bool]]] = [
        (split, of(split)) for split in (*SPLITS, "blind")
    ]
    styles = sorted({r.case.style for r in words if r.case.split == "blind"})
    groups += [(f"  blind: {s}", of("blind", s)) for s in styles]
    groups += [("all but blind", lambda c: c.split != "blind"),
               ("held-out+fresh+blind", lambda c: c.split != "dev")]
    head = "hit@1  hit@3  hit@5  index"
    print(f"{'':<24}{'n':>4}   BM25F  {head}   | hybrid {head}")
    for label, keep in groups:
        a = [r for r in words if keep(r.case)]
        b = [r for r in hybrid if keep(r.case)]
        print(f"{label:<24}{len(a):>4}   {rates(a):<34} | {rates(b)}")
    print(f"(index: the right skill is among those listed within {budget} tokens)")


def tune(cases: list[Case], entries: list, cosines_of: Callable[[str], dict[str, float]]
         ) -> None:
    """The fusion-weight search, on the dev split only."""
    from core.skills import fusion
    from core.skills.ranking import lexical_scores

    dev = [c for c in cases if c.split == "dev"]
    names = [e.name for e in entries]
    prepared = [(c, lexical_scores(entries, c.text), cosines_of(c.text)) for c in dev]

    def hits(weight: float, floor: float, spread: float) -> float:
        at3 = 0
        for case, lexical, cosines in prepared:
            scores = fusion.fuse(lexical, [cosines.get(n) for n in names], weight=weight,
                                 floor=floor, min_spread=spread)
            order = sorted(range(len(names)), key=lambda i: (-scores[i], names[i]))
            at3 += case.skill in [names[i] for i in order[:3]]
        return at3 / len(dev)

    weights = (0.0, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9, 1.0)
    print(f"\nfusion weight search on the dev split only (n={len(dev)}): hit@3")
    print("floor spread  " + "  ".join(f"w={w:<4}" for w in weights))
    for floor, spread in ((0.0, 0.0), (0.1, 0.2), (0.15, 0.2), (0.15, 0.3), (0.2, 0.3)):
        print(f"{floor:<5} {spread:<6} " + "  ".join(f"{hits(w, floor, spread):.3f}"
                                                    for w in weights))
    print(f"frozen: weight {fusion.SEMANTIC_WEIGHT}, floor {fusion.ABSOLUTE_FLOOR}, min spread "
          f"{fusion.MIN_SPREAD} (the middle of the plateau)")


def cold_first_ranking(user: str) -> str:
    """The first hybrid ranking in a new process (loads the model), measured in a child."""
    code = (
        "import time, sys; sys.path.insert(0, '.');"
        "from core.config import load_settings; from core.store import open_store;"
        "from core.skills.library import SkillLibrary; from core.skills.index import index_for;"
        "s = load_settings(); st = open_store(s); lib = SkillLibrary(st, s);"
        "t = time.perf_counter(); index_for(lib, sys.argv[1], 'shrink my holiday photos');"
        "a = time.perf_counter() - t; t = time.perf_counter();"
        "index_for(lib, sys.argv[1], 'restore the database from last night');"
        "print(f'{a:.3f} {time.perf_counter() - t:.3f}')"
    )
    out = subprocess.run([sys.executable, "-c", code, user], cwd=ROOT, capture_output=True,
                         text=True, check=True, env=dict(os.environ))
    first, second = (float(v) * 1000 for v in out.stdout.split())
    return f"first {first:.0f} ms (model load included), then {second:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", type=int, default=5, help="phrasings to re-check via the CLI")
    parser.add_argument("--show-misses", action="store_true", help="list every miss at 3")
    parser.add_argument("--tune", action="store_true", help="show the dev-split weight search")
    parser.add_argument("--no-lexicon", action="store_true",
                        help="rank without the concept groups of core/skills/lexicon.py")
    parser.add_argument("--hermes", action="store_true",
                        help="evaluate over Hermes Agent's public skills instead")
    parser.add_argument("--hermes-only", action="store_true",
                        help="with --hermes: leave bench/data/skills/library out")
    args = parser.parse_args()

    home = fresh_home()
    if args.no_lexicon:
        from contextlib import ExitStack

        import _hermes_routing

        stack = ExitStack()  # for the whole run (kept referenced: the generator must live)
        stack.enter_context(_hermes_routing.lexicon_off())
    if args.hermes:
        import _hermes_routing

        _hermes_routing.main(args.show_misses, with_library=not args.hermes_only)
        print(f"\n(state in {home})")
        return
    from core.config import load_settings
    from core.search import embed
    from core.skills import semantic as semantic_module
    from core.skills.importer import import_skills
    from core.skills.index import index_for, select, skill_cosines
    from core.skills.library import Change, SkillLibrary
    from core.skills.semantic import BACKFILL_SECONDS, skill_vectors
    from core.store import open_store
    from core.store.skill_vectors import SYSTEM_SCOPE

    settings = load_settings()
    store = open_store(settings)
    library = SkillLibrary(store, settings)
    user = store.users.for_account("http:bench")
    semantic = embed.available()
    if semantic:
        started = time.perf_counter()
        embed.encoder()
        print(f"model {embed.FULL} loaded in {time.perf_counter() - started:.2f} s")
    else:
        print("the embedding model is not installed: the hybrid rows equal BM25F")
    started = time.perf_counter()
    report = import_skills(library, user, str(DATA / "library"))
    took = time.perf_counter() - started
    assert not report.refused, [(i.path, i.reasons) for i in report.refused]
    entries = [e for e in library.entries(user) if e.status != "archived"]
    names = sorted(e.name for e in entries)
    print(f"library: {len(report.loaded)} imported + {len(entries) - len(report.loaded)} "
          f"bundled = {len(entries)} skills (import, vectors included, took {took:.2f} s, "
          f"{took / len(report.loaded) * 1000:.1f} ms per skill)")

    cases = load_cases()
    missing = {c.skill for c in cases} - set(names)
    assert not missing, missing

    def shown(semantic_flag: bool) -> Callable[[str], list[str]]:
        return lambda text: [r.entry.name for r in
                             index_for(library, user, text, semantic=semantic_flag).shown]

    if semantic:
        assert skill_cosines(library, user, entries, "warm up") is not None
    words, words_times = evaluate(cases, names, shown(False))
    hybrid, hybrid_times = evaluate(cases, names, shown(True))
    budget = settings.skills_index_tokens
    print(f"\nrouting over {len(entries)} skills, {len(cases)} phrasings:")
    print_table(words, hybrid, budget)
    print("\nranking + index build per message (warm process):")
    print(f"  BM25F  {summary(words_times)}")
    print(f"  hybrid {summary(hybrid_times)}")
    if semantic:
        print(f"  hybrid in a new process: {cold_first_ranking(user)}")
        store.skill_vectors.delete(user)
        store.skill_vectors.delete(SYSTEM_SCOPE)
        semantic_module._cache.clear()  # as in a new process: nothing to reuse
        rounds, started = [], time.perf_counter()
        while True:
            t0 = time.perf_counter()
            ready = skill_vectors(store.skill_vectors, user, entries) is not None
            rounds.append(time.perf_counter() - t0)
            if ready or len(rounds) == 100:
                break
        print(f"  lazy backfill of all {len(entries)} skills' vectors after they were dropped: "
              f"{time.perf_counter() - started:.2f} s over {len(rounds)} rankings (at most "
              f"{BACKFILL_SECONDS:.0f} s each; words only until done)")
    if args.tune and semantic:
        tune(cases, entries, lambda text: skill_cosines(library, user, entries, text) or {})

    misses = [r for r in hybrid if r.rank > 3]
    if args.show_misses or misses:
        print(f"\nhybrid misses at 3 ({len(misses)}):")
        for r in misses:
            top = shown(True)(r.case.text)[:3]
            print(f"  #{r.rank:<3} {r.case.split:<8} {r.case.skill:<24} {r.case.text!r}\n"
                  f"        top 3: {', '.join(top)}")

    if args.cli:
        env = {**os.environ, "USER": "bench"}
        for case in cases[: args.cli]:
            out = subprocess.run(
                [sys.executable, "-m", "local_dev.cli", "skills", "search", case.text, "--json",
                 "--user", "http:bench"], cwd=ROOT, env=env, capture_output=True, text=True,
                check=True)
            cli_order = [s["name"] for s in json.loads(out.stdout)["skills"]]
            assert cli_order == shown(True)(case.text), case.text
        print(f"\n`iris skills search --json` gave the same ranking for {args.cli} phrasings")

    edge = import_skills(library, user, str(EDGE_CORPUS))
    have = len(library.entries(user))

    def filler_change(i: int, _current: object) -> Change:
        return Change(provenance="user", action="create", replace_all=True,
                      write={"SKILL.md": filler_skill(i).encode()})

    for i in range(max(0, 200 - have)):
        library.apply(user, f"team-routine-{i:03d}", partial(filler_change, i))
    installed = library.entries(user)[:200]
    sizes = []
    for case in cases:
        cosines = skill_cosines(library, user, installed, case.text) if semantic else None
        view = select(installed, case.text, budget, cosines)
        sizes.append((view.tokens, len(view.shown), view.text))
    worst = max(sizes, key=lambda s: s[0])
    real = bpe_counts(worst[2])
    print(f"\nL0 index (hybrid) with {len(installed)} skills installed ({len(edge.loaded)} from "
          f"the edge-case corpus, {max(0, 200 - have)} filler): budget {budget} tokens")
    print(f"  listed skills per message: min {min(s[1] for s in sizes)}, "
          f"max {max(s[1] for s in sizes)}")
    print(f"  estimated tokens: max {worst[0]}, mean {sum(s[0] for s in sizes) / len(sizes):.0f}")
    for encoding, count in real.items():
        print(f"  largest index measured with {encoding}: {count} tokens")
    store.close()
    print(f"\n(state in {home})")


if __name__ == "__main__":
    main()
