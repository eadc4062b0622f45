"""Routing over real public skills (``bench/skills_routing.py --hermes``).

The library: Hermes Agent's published skills, imported in place from
../shared/corpora/hermes-skills (quarantined ones approved, as a user who reviewed them would;
the one refused jailbreak kit is absent), plus the 113 skills of bench/data/skills/library and
the 5 bundled ones, so ~300 skills compete. The phrasings (bench/data/hermes_routing) were
written before any ranking over this corpus ran, and split dev / held-out by hashing.

Prints hit@1/3/5 and "in the index" for words only and hybrid, dev next to held-out, by style;
the lexicon ablation (the concept groups of core/skills/lexicon.py switched off) on both
splits; how often a match list (`skills_list(query=…)`, `/skills WORDS`) comes back empty
while the right skill is installed; and the index's size in tokens.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from _common import ROOT

HERMES = ROOT.parent.parent / "shared" / "corpora" / "hermes-skills"
PHRASINGS = ROOT / "bench" / "data" / "hermes_routing" / "phrasings.json"
LIBRARY = ROOT / "bench" / "data" / "skills" / "library"
SPLITS = ("dev", "held-out")


@contextmanager
def lexicon_off() -> Iterator[None]:
    """Rank without the concept groups (words match only as themselves)."""
    from core.skills import ranking

    saved = ranking.concepts
    ranking.concepts = dict  # type: ignore[assignment]  # no word stands for a concept
    ranking._docs.clear()
    try:
        yield
    finally:
        ranking.concepts = saved
        ranking._docs.clear()


def rates(ranks: list[int], listed: list[bool]) -> str:
    n = len(ranks)
    if not n:
        return "-"
    hits = [sum(r <= k for r in ranks) / n for k in (1, 3, 5)]
    return " ".join(f"{v:6.1%}" for v in (*hits, sum(listed) / n))


def run(semantic_available: bool, show_misses: bool, with_library: bool) -> None:
    from core.config import load_settings
    from core.skills import quarantine
    from core.skills.importer import import_skills
    from core.skills.index import index_for, matches
    from core.skills.library import SkillLibrary
    from core.store import open_store

    settings = load_settings()
    store = open_store(settings)
    library = SkillLibrary(store, settings)
    user = store.users.for_account("http:hermes-bench")
    report = import_skills(library, user, str(HERMES))
    held = [q.name for q in quarantine.pending(library, user)]
    for name in held:
        quarantine.approve(library, user, name, by="bench")
    extra = import_skills(library, user, str(LIBRARY)) if with_library else None
    entries = library.entries(user)
    names = sorted(e.name for e in entries)
    print(f"\nHermes skills: {len(report.loaded)} loaded + {len(held)} approved from quarantine, "
          f"{len(report.refused)} refused; + {len(extra.loaded) if extra else 0} from "
          f"bench/data/skills/library + bundled = {len(entries)} skills installed")
    cases = json.loads(PHRASINGS.read_text())
    missing = {c["skill"] for c in cases} - set(names)
    assert not missing, missing

    def evaluate(semantic: bool) -> list[tuple[dict, int, bool, int]]:
        out = []
        for case in cases:
            view = index_for(library, user, case["text"], semantic=semantic)
            order = [r.entry.name for r in view.shown]
            full = order + [n for n in names if n not in order]
            out.append((case, full.index(case["skill"]) + 1, case["skill"] in order,
                        view.tokens))
        return out

    runs: dict[str, list[tuple[dict, int, bool, int]]] = {"words": evaluate(False)}
    if semantic_available:
        runs["hybrid"] = evaluate(True)
    with lexicon_off():
        runs["words, no lexicon"] = evaluate(False)
        if semantic_available:
            runs["hybrid, no lexicon"] = evaluate(True)

    def of(split: str, style: str | None = None) -> Callable[[dict], bool]:
        """Whether a case is in ``split`` (and, given one, phrased in ``style``)."""
        return lambda c: c["split"] == split and (style is None or c["style"] == style)

    groups = [(split, of(split)) for split in SPLITS]
    for style in ("direct", "indirect", "other-language"):
        groups += [(f"  {split}: {style}", of(split, style)) for split in SPLITS]
    head = "hit@1  hit@3  hit@5  index"
    for label_a, label_b in (("words", "hybrid"), ("words, no lexicon", "hybrid, no lexicon")):
        if label_a not in runs:
            continue
        print(f"\n{'':<26}{'n':>4}   {label_a:<33}| {label_b}")
        print(f"{'':<30}   {head}   | {head}")
        for label, keep in groups:
            a = [r for r in runs[label_a] if keep(r[0])]
            b = [r for r in runs.get(label_b, []) if keep(r[0])]
            print(f"{label:<26}{len(a):>4}   {rates([r[1] for r in a], [r[2] for r in a]):<33}"
                  f"| {rates([r[1] for r in b], [r[2] for r in b])}")
    budget = settings.skills_index_tokens
    tokens = [r[3] for rows in runs.values() for r in rows]
    print(f"\nindex: budget {budget} tokens, largest {max(tokens)} (estimate), mean "
          f"{sum(tokens) / len(tokens):.0f}; 'index' above = the right skill is listed in it")

    empty = {"words": 0, "hybrid": 0}
    for case in cases:
        for mode in empty:
            if mode == "hybrid" and not semantic_available:
                continue
            found = matches(library, user, case["text"], limit=15, semantic=mode == "hybrid")
            empty[mode] += not found
    print(f"match lists (skills_list(query=…), /skills WORDS) that came back empty although "
          f"the right skill is installed: words only {empty['words']}, hybrid "
          f"{empty['hybrid']} of {len(cases)}")

    best = "hybrid" if semantic_available else "words"
    misses = [r for r in runs[best] if r[1] > 3]
    if show_misses or misses:
        print(f"\n{best} misses at 3 ({len(misses)}):")
        for case, rank, _, _ in misses:
            top = [r.entry.name for r in index_for(library, user, case["text"],
                                                    semantic=best == "hybrid").shown[:3]]
            print(f"  #{rank:<3} {case['split']:<8} {case['skill']:<28} {case['text']!r}\n"
                  f"        top 3: {', '.join(top)}")
    store.close()


def main(show_misses: bool, with_library: bool = True) -> None:
    from core.search import embed

    if not Path(HERMES).is_dir():
        raise SystemExit(f"{HERMES} is not there: the Hermes corpus is read in place")
    run(embed.available(), show_misses, with_library)
