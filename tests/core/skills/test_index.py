"""Ranking and the L0 prompt index: relevance, the usage prior, the token budget, and that
`iris skills search` is exactly the index."""

from __future__ import annotations

import dataclasses

from core.skills.index import estimate_tokens, index_for, select, skills_section
from core.skills.ranking import rank, similarity, terms
from core.skills.records import SkillEntry, SkillUsage


def entry(name: str, description: str, *, tags=(), used: int = 0, status="active",
          body: str = "") -> SkillEntry:
    return SkillEntry(name=name, description=description, tags=tuple(tags), category=None,
                      origin="agent", provenance="agent", version=1, files=(),
                      search_text=body, status=status, usage=SkillUsage(used=used))


LIBRARY = [
    entry("pg-backup", "Backs up a PostgreSQL database with pg_dump and restores it.",
          tags=["postgres", "backup"]),
    entry("nginx-reload", "Checks and reloads an nginx configuration without downtime."),
    entry("weekly-report", "Writes the weekly status report from merged pull requests."),
    entry("docker-cleanup", "Frees disk space by pruning unused Docker images and volumes.",
          body="1. docker system df\n2. docker image prune -a\n3. docker volume prune"),
]


def test_terms_stem_and_drop_filler():
    assert terms("Please help me with backing up my databases!") == ["back", "databas"]
    assert terms("nginx-reload") == ["nginx", "reload"]
    assert terms("Café über straße") == ["café", "über", "strass"]


def test_rank_finds_paraphrases_through_stems_tags_and_body():
    assert rank(LIBRARY, "can you back up our postgres db")[0].entry.name == "pg-backup"
    assert rank(LIBRARY, "reloading the nginx config")[0].entry.name == "nginx-reload"
    assert rank(LIBRARY, "my disk is full of old docker images")[0].entry.name == "docker-cleanup"
    assert rank(LIBRARY, "prune volumes")[0].entry.name == "docker-cleanup"


def test_unmatched_skills_follow_most_used_first():
    library = [dataclasses.replace(LIBRARY[0], usage=SkillUsage(used=1)),
               dataclasses.replace(LIBRARY[1], usage=SkillUsage(used=9)), *LIBRARY[2:]]
    ranked = rank(library, "weekly report")
    assert ranked[0].entry.name == "weekly-report" and ranked[0].score > 0
    assert [r.entry.name for r in ranked[1:3]] == ["nginx-reload", "pg-backup"]
    assert all(r.score == 0 for r in ranked[1:])


def test_usage_prior_breaks_near_ties_but_not_relevance():
    a = entry("deploy-api", "Deploys the API service to production.")
    b = entry("deploy-web", "Deploys the web service to production.", used=50)
    assert rank([a, b], "deploy to production")[0].entry.name == "deploy-web"
    assert rank([a, b], "deploy the api")[0].entry.name == "deploy-api"
    stale = dataclasses.replace(b, status="stale", usage=SkillUsage())
    assert rank([a, stale], "deploy to production")[0].entry.name == "deploy-api"


def test_index_stays_within_its_budget_and_says_how_to_find_the_rest():
    many = [entry(f"skill-{i:03d}", f"Handles task number {i} about topic {i % 17} with care and "
                  "a description long enough to cost real tokens in the prompt.")
            for i in range(200)]
    view = select(many, "topic 5", 1500)
    assert view.tokens <= 1500
    assert 10 < len(view.shown) < 200 and view.total == 200
    assert f"{len(view.shown)} of 200 skills" in view.text
    assert "skills_list(query=...)" in view.text
    assert view.shown[0].score > 0 and "topic 5 " in view.shown[0].entry.description
    small = select(LIBRARY, "anything", 1500)
    assert "All 4 skills:" in small.text and len(small.shown) == 4
    assert select([dataclasses.replace(LIBRARY[0], status="archived")], "x", 1500).shown == []


def test_token_estimate_is_generous_for_english_and_code():
    assert estimate_tokens("") == 0
    assert estimate_tokens("Backs up a PostgreSQL database with pg_dump and restores it.") >= 9
    assert estimate_tokens("`iris skills search \"TEXT\" --limit 3`") >= 12
    assert estimate_tokens("日本語のテキスト") == 8


def test_similarity():
    assert similarity("Backs up Postgres databases", "backing up a postgres database") > 0.99
    assert similarity("Backs up Postgres databases", "Reloads nginx") == 0.0


def test_section_lists_bundled_skills_and_counts_them_as_shown(runtime, store):
    from core.contracts.prompt import PromptInputs
    from core.skills.library import SkillLibrary

    user = store.users.for_account("http:alice")
    session = store.sessions.start(user, "alice", "http")
    inputs = PromptInputs(store=store, settings=runtime.settings, user_id=user, session=session,
                          platform="http", first_message="my telegram bot does not answer")
    text = skills_section(inputs)
    assert text.startswith("## Skills") and "- telegram-bot-setup:" in text
    assert text.index("telegram-bot-setup") < text.index("git-workflow")
    library = SkillLibrary(store, runtime.settings)
    assert library.catalog.usage(user)["telegram-bot-setup"].shown == 1
    view = index_for(library, user, "my telegram bot does not answer")
    assert view.text == text
