"""Hybrid skill routing: meaning found where words fail, names still first, vectors per skill
version refreshed on every write and kept per user, and words alone without the model."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from core.search import embed
from core.skills import semantic
from core.skills.index import index_for, skill_cosines
from core.skills.manage import SkillEditor
from core.skills.ranking import lexical_scores
from core.store.skill_vectors import SYSTEM_SCOPE
from tests.core.skills.conftest import skill_md

SKILLS = {
    "image-resize": "Batch resizes, crops, converts and compresses images with ImageMagick or "
                    "Pillow, keeping aspect ratio. Use when the user has many images to shrink "
                    "or convert.",
    "pg-backup": "Backs up a PostgreSQL database with pg_dump and restores it with pg_restore. "
                 "Use when the user asks for a database backup or a restore.",
    "weekly-report": "Writes the weekly status report from merged pull requests and closed "
                     "tickets.",
    "docker-cleanup": "Frees disk space by pruning unused Docker images, containers and volumes.",
    "meal-planning": "Plans a week of meals around diet, budget and time, with recipes and a "
                     "shopping list.",
    "ssh-key-setup": "Creates an SSH key pair and installs the public key on servers, fixing "
                     "'Permission denied (publickey)'.",
    "audio-transcribe": "Transcribes audio or video recordings to text with Whisper, with "
                        "timestamps and speaker turns.",
}


def install(library, user, skills=SKILLS):
    editor = SkillEditor(library, user, provenance="user")
    for name, description in skills.items():
        editor.create(name, skill_md(name, description))


def order(library, user, text, **kwargs):
    return [r.entry.name for r in index_for(library, user, text, **kwargs).shown]


def stored(store, user):
    return store.skill_vectors.load(user, semantic.MODEL)


def own(library, user):
    return [e for e in library.entries(user) if not e.bundled]


def test_a_phrasing_sharing_no_word_finds_its_skill(library, alice):
    install(library, alice)
    text = "I'd like my grandma's stories on tape written down"
    entries = own(library, alice)
    assert not any(lexical_scores(entries, text)), "the phrasing must share no word"
    assert order(library, alice, text, semantic=False)[0] != "audio-transcribe"
    assert order(library, alice, text)[0] == "audio-transcribe"


def test_the_prompt_index_is_ranked_by_meaning_too(runtime, store, library, alice):
    from core.contracts.prompt import PromptInputs
    from core.skills.index import skills_section

    install(library, alice)
    session = store.sessions.start(alice, "alice", "http")
    inputs = PromptInputs(store=store, settings=runtime.settings, user_id=alice,
                          session=session, platform="http",
                          first_message="I'd like my grandma's stories on tape written down")
    text = skills_section(inputs)
    listed = [line for line in text.splitlines() if line.startswith("- ")]
    assert listed[0].startswith("- audio-transcribe:") and len(listed) == 12


def test_meaning_outweighs_a_misleading_word(library, alice):
    install(library, alice)
    text = "what should we eat this week"
    assert order(library, alice, text, semantic=False)[0] == "weekly-report"
    assert order(library, alice, text)[0] == "meal-planning"


@pytest.mark.parametrize("semantic_flag", [None, False])
def test_a_skill_named_verbatim_ranks_first(library, alice, semantic_flag):
    install(library, alice)
    text = "use weekly-report, but first back up the postgres database with pg_dump"
    assert order(library, alice, text, semantic=semantic_flag)[0] == "weekly-report"
    assert order(library, alice, "docker-cleanup", semantic=semantic_flag)[0] == "docker-cleanup"
    assert order(library, alice, "/meal planning", semantic=semantic_flag)[0] == "meal-planning"
    assert order(library, alice, "pg-backup-v2 please", semantic=semantic_flag)[0] == "pg-backup"


def test_without_the_model_routing_uses_words_and_writes_no_vectors(library, store, alice,
                                                                    monkeypatch):
    def missing():
        raise embed.ModelMissing(embed.ModelMissing.__doc__)

    monkeypatch.setattr(embed, "model_zip", missing)
    monkeypatch.setattr(embed, "_available", None)
    install(library, alice)
    assert stored(store, alice) == {}
    assert skill_cosines(library, alice, own(library, alice), "back up postgres") is None
    text = "my snapshots from the trip are huge, make them smaller"
    assert order(library, alice, text) == order(library, alice, text, semantic=False)
    assert order(library, alice, "restore the postgres database")[0] == "pg-backup"
    SkillEditor(library, alice).patch("pg-backup", "pg_restore.", "pg_restore, fast.")
    assert stored(store, alice) == {}


def test_a_failing_encoder_falls_back_to_words(library, alice, monkeypatch):
    install(library, alice)

    def broken(*args, **kwargs):
        raise RuntimeError("encoder exploded")

    monkeypatch.setattr(semantic, "skill_vectors", broken)
    text = "my snapshots from the trip are huge, make them smaller"
    assert order(library, alice, text) == order(library, alice, text, semantic=False)


def test_vectors_follow_each_version(library, store, alice):
    install(library, alice)
    first = stored(store, alice)["meal-planning"]
    assert first.version == 1 and len(first.blobs) == 1  # one sentence, one vector
    editor = SkillEditor(library, alice)
    editor.patch("meal-planning", "Plans a week of meals around diet, budget and time, with "
                 "recipes and a shopping list.",
                 "Keeps a vegetable garden, when to sow, water and harvest. Use when the user "
                 "grows tomatoes or herbs.")
    second = stored(store, alice)["meal-planning"]
    assert second.version == 2 and second.digest != first.digest and len(second.blobs) == 2
    text = "when should I plant my tomato seedlings outside"
    cosines = skill_cosines(library, alice, own(library, alice), text)
    assert max(cosines, key=cosines.get) == "meal-planning"
    editor.patch("meal-planning", "1. Do the thing.", "1. Do the other thing.")
    third = stored(store, alice)["meal-planning"]
    assert third.version == 3 and third.digest == second.digest
    library.rollback(alice, "meal-planning", 1, provenance="user")
    assert stored(store, alice)["meal-planning"].digest == first.digest
    rows = store.db.query("SELECT DISTINCT version FROM skill_vectors WHERE user_id = ? AND"
                          " name = 'meal-planning'", (alice,))
    assert [r["version"] for r in rows] == [4]


def test_imported_skills_get_vectors(library, store, alice, tmp_path):
    from core.skills.importer import import_skills

    for name in ("pg-backup", "docker-cleanup"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "SKILL.md").write_text(skill_md(name, SKILLS[name]))
    import_skills(library, alice, str(tmp_path))
    assert set(stored(store, alice)) == {"pg-backup", "docker-cleanup"}


def test_missing_or_malformed_vectors_are_computed_lazily(library, store, alice):
    install(library, alice)
    repo = store.skill_vectors
    repo.delete(alice, "pg-backup")
    good = stored(store, alice)["image-resize"]
    repo.put(alice, semantic.MODEL, "image-resize", good.version, good.digest, [b"\x01\x02"])
    entries = own(library, alice)
    assert semantic.skill_vectors(store.skill_vectors, alice, entries, seconds=0.0) is None
    text = "my snapshots from the trip are huge, make them smaller"
    assert order(library, alice, text)[0] == "image-resize"  # computed within the budget
    after = stored(store, alice)
    assert {"pg-backup", "image-resize"} <= set(after)
    assert all(len(b) == 384 for b in after["image-resize"].blobs)


def test_one_users_vectors_never_rank_anothers_skills(library, store, alice, bob):
    install(library, alice, {"helper": "Plans a week of meals with recipes and a shopping "
                                       "list."})
    install(library, bob, {"helper": "Backs up a PostgreSQL database with pg_dump.",
                           **{k: SKILLS[k] for k in ("image-resize", "meal-planning")}})
    text = "what should we cook for dinner this week"
    mine = skill_cosines(library, bob, own(library, bob), text)
    assert mine["helper"] < mine["meal-planning"]
    repo = store.skill_vectors
    query = embed.quantise(embed.encoder(semantic.MODEL).encode([text]))
    for user in (alice, bob):
        row = stored(store, user)["helper"]
        assert store.db.scalar("SELECT count(*) FROM skill_vectors WHERE user_id = ? AND"
                               " name = 'helper'", (user,)) == len(row.blobs)
    alices = stored(store, alice)["helper"]
    repo.put(alice, semantic.MODEL, "helper", alices.version, alices.digest, query)
    assert skill_cosines(library, alice, own(library, alice), text)["helper"] > 0.99
    again = skill_cosines(library, bob, own(library, bob), text)
    assert again == pytest.approx(mine)
    assert order(library, bob, text)[0] == "meal-planning"


def test_bundled_skills_are_shared_but_a_users_copy_is_theirs(library, store, alice, bob,
                                                              monkeypatch):
    monkeypatch.setattr(semantic, "_cache", type(semantic._cache)())  # a new process
    text = "my telegram bot does not answer"
    assert order(library, alice, text)[0] == "telegram-bot-setup"
    bundled = stored(store, SYSTEM_SCOPE)
    assert "telegram-bot-setup" in bundled and bundled["telegram-bot-setup"].version == 0
    assert stored(store, alice) == {}
    SkillEditor(library, alice).patch(
        "telegram-bot-setup", "Connects Iris to Telegram end to end",
        "Plans a week of meals with recipes and a shopping list. It also connects Iris to "
        "Telegram end to end")
    copy = stored(store, alice)["telegram-bot-setup"]
    assert copy.version == 1 and copy.digest != bundled["telegram-bot-setup"].digest
    assert stored(store, SYSTEM_SCOPE)["telegram-bot-setup"] == bundled["telegram-bot-setup"]
    meals = "what should we cook this week"
    a = skill_cosines(library, alice, library.entries(alice), meals)["telegram-bot-setup"]
    b = skill_cosines(library, bob, library.entries(bob), meals)["telegram-bot-setup"]
    assert a > b + 0.2


def test_vector_rows_need_an_owner_and_content(store):
    repo = store.skill_vectors
    with pytest.raises(ValueError):
        repo.put("", semantic.MODEL, "x", 1, "d", [b"\x00" * 384])
    with pytest.raises(ValueError):
        repo.put("usr_1", semantic.MODEL, "x", 1, "d", [])
    assert store.db.scalar("SELECT count(*) FROM skill_vectors") == 0


def test_skill_texts_split_descriptions_into_sentences():
    from tests.core.skills.test_index import entry

    words = " ".join(f"w{i}" for i in range(130))
    long = entry("big-one", f"First sentence here. {words}. Use when asked?")
    texts = semantic.skill_texts(long)
    assert texts[0] == "big one: First sentence here."
    assert [len(t.split()) for t in texts[1:]] == [62, 62, 12, 5]
    assert texts[-1] == "big one: Use when asked?"
    assert semantic.skill_texts(entry("x-y", "   ")) == ["x y"]


def test_queries_without_words_use_no_vectors(library, alice):
    install(library, alice)
    assert skill_cosines(library, alice, own(library, alice), "?!… ") is None
    assert skill_cosines(library, alice, [], "back up postgres") is None


def test_similarities_match_a_direct_encoding(library, store, alice):
    install(library, alice)
    text = "make these pictures smaller"
    cosines = skill_cosines(library, alice, own(library, alice), text)
    encoder = embed.encoder(semantic.MODEL)
    entry = next(e for e in own(library, alice) if e.name == "image-resize")
    direct = float((encoder.encode(semantic.skill_texts(entry)) @ encoder.encode([text])[0]).max())
    assert cosines["image-resize"] == pytest.approx(direct, abs=0.02)  # int8-stored vectors
    assert np.isfinite(list(cosines.values())).all()


def test_routing_modules_stay_off_the_webhook_path():
    code = ("import sys, functions.app, functions.http_api, core.skills.index, "
            "core.skills.ranking, core.skills.fusion, core.store.skill_vectors;"
            "print('numpy' in sys.modules, 'core.skills.semantic' in sys.modules,"
            " 'tokenizers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False False"


def test_match_lists_find_by_meaning_too(library, alice, runtime):
    """skills_list(query=…) and /skills WORDS were words-only and came back empty for a request
    that shares no word with the skill it means."""
    import asyncio

    from core.commands import CommandContext
    from core.commands.skills import list_skills
    from core.skills.index import matches
    from core.tools.skills_list import SkillsList, SkillsListArgs
    from tests.core.acting.support import make_ctx

    install(library, alice, SKILLS | {
        "frontend-speedup": "Profiles sluggish single-page sites in the browser and removes "
                            "wasted component updates with memoisation and virtualised lists."})
    text = "My React app re-renders too much, make it faster"
    entries = own(library, alice)
    assert not any(lexical_scores(entries, text)), "the phrasing must share no word"
    assert matches(library, alice, text, limit=5, semantic=False) == []
    assert matches(library, alice, text, limit=5)[0].name == "frontend-speedup"

    ctx = make_ctx(library.store, library.settings)
    ctx.user_id = alice
    listed = asyncio.run(SkillsList().run(ctx, SkillsListArgs(query=text)))
    assert listed.startswith("- frontend-speedup [")
    command = CommandContext(store=library.store, settings=library.settings,
                             services=ctx.services, user_id=alice, account="http:alice",
                             chat_key="alice", platform="http", session=None)
    reply = asyncio.run(list_skills(command, text)).reply
    assert reply.startswith("Best matches:\n/frontend-speedup")
