"""The fixed prompt: tokens the model receives before any conversation (system + tool schemas).

    .venv/bin/python bench/prompt_size.py [--top 8]

Runs the real path: the emulator over HTTP → the turn → litellm → a scripted OpenAI-compatible
server on loopback, which records the request body. Every tool is available (a fake SearXNG
turns web_search on, a vision model vision_analyze). One user has no skills of their own; the
other has 200 installed (the 113 of bench/data/skills/library, the rest generated), plus the
bundled ones for both; then that user again, in a new session, as a member of a team whose notes
block is full (docs/teams.md); then a third user with 150 skills of their own and 50 approved team
skills (200 in all) in that team. Counts
are cl100k_base (tiktoken): the system message's text, the tool list as JSON (what litellm
sends), and their sum; then the largest tool schemas, and the tools sent.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import tempfile
from functools import partial
from pathlib import Path

from _common import ROOT

DATA = ROOT / "bench" / "data" / "skills"
TOKENIZERS = "litellm/litellm_core_utils/tokenizers"


def encoder():
    spec = importlib.util.find_spec("litellm")
    if spec and spec.origin:  # litellm ships cl100k_base: no download
        os.environ.setdefault("TIKTOKEN_CACHE_DIR",
                              str(Path(spec.origin).parent.parent / TOKENIZERS))
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


def filler_skill(i: int) -> str:
    topics = ["invoices", "sensor data", "release notes", "onboarding", "backups"]
    topic = topics[i % len(topics)]
    return (f"---\nname: team-routine-{i:03d}\ndescription: Runs the team's routine number {i} "
            f"for {topic}: gathers the inputs, checks them against last week's, and posts a "
            f"short summary. Use when someone asks for routine {i} or the {topic} round-up.\n"
            f"---\n\n# Routine {i}\n\n1. Gather.\n2. Compare.\n3. Post.\n")


def install_skills(runtime, account: str, count: int) -> int:
    from core.skills.importer import import_skills
    from core.skills.library import Change, SkillLibrary

    library = SkillLibrary(runtime.store, runtime.settings)
    user = runtime.store.users.for_account(account)
    import_skills(library, user, str(DATA / "library"))
    have = len(library.entries(user))

    def filler_change(i: int, _current: object) -> Change:
        return Change(provenance="user", action="create", replace_all=True,
                      write={"SKILL.md": filler_skill(i).encode()})

    for i in range(max(0, count - have)):
        library.apply(user, f"team-routine-{i:03d}", partial(filler_change, i))
    return len(library.entries(user))


def share_team_skills(runtime, team_id: str, count: int) -> int:
    """``count`` skills proposed to the team and approved (docs/teams.md, team skills)."""
    from core.skills.team_offers import proposal

    store = runtime.store
    lead = store.users.for_account("http:team-lead")
    topics = ["deploys", "incidents", "on-call", "code review", "dashboards"]
    for i in range(count):
        name, topic = f"shared-routine-{i:03d}", topics[i % len(topics)]
        text = (f"---\nname: {name}\ndescription: The team's shared routine {i} for {topic}: "
                f"the agreed steps, who to tell, and where results go. Use when someone asks "
                f"for shared routine {i} or the {topic} checklist.\n---\n\n# Shared {i}\n\n"
                "1. Check.\n2. Tell.\n3. File.\n")
        store.team_skills.propose(lead, team_id, proposal(name, {"SKILL.md": text.encode()}))
        store.team_skills.decide(lead, team_id, name, 1, True)
    return len(store.team_skills.offered(lead))


def fill_team_notes(runtime, account: str) -> int:
    """Make ``account`` a member of a team whose notes block is full (docs/teams.md)."""
    from core.teams.notes import NOTE_LIMIT, NOTES_LIMIT, write_note

    store = runtime.store
    lead = store.users.for_account("http:team-lead")
    team = store.teams.create(lead, "bench-team")
    store.teams.add(lead, team.id, store.users.for_account(account))
    store.teams.add(lead, team.id, store.users.for_account("http:mixed"))
    note = ("Deploys go out on Tuesdays after the 10:00 stand-up; the staging database is on "
            "port 6543 and the on-call rota lives in the ops wiki under Rotations. ")
    for i in range(NOTES_LIMIT // len(note) + 1):
        write_note(store, lead, team.id, f"{i}. {note}"[:NOTE_LIMIT])
    return sum(len(n.content) for n in store.team_notes.live(lead, team.id))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=8, help="largest tool schemas to list")
    parser.add_argument("--show", action="store_true", help="print the 200-skill system prompt")
    args = parser.parse_args()
    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-bench-prompt-")
    import httpx

    from core.config import load_settings
    from iris_testing.llm_server import ScriptedLLM
    from iris_testing.server import serve
    from iris_testing.web_fakes import FakeSearch
    from local_dev.emulator import build_emulator

    enc = encoder()
    llm = ScriptedLLM()
    with serve(llm.app) as model, serve(FakeSearch().app) as search:
        os.environ.update({
            "IRIS_MODEL": "openai/scripted-model", "IRIS_MODEL_API_BASE": f"{model.url}/v1",
            "IRIS_MODEL_API_KEY": "sk-bench", "IRIS_API_KEY": "bench-key",
            "IRIS_SESSION_TITLES": "false", "IRIS_MEMORY_REVIEW_EVERY": "0",
            "IRIS_MEMORY_REVIEW_AT_SESSION_END": "false", "IRIS_SANDBOX_ISOLATION": "none",
        })
        if importlib.util.find_spec("core.web"):  # absent before the web tools (to compare)
            os.environ.update({"IRIS_WEB_SEARCH_PROVIDER": "searxng",
                               "IRIS_WEB_SEARCH_URL": search.url,
                               "IRIS_VISION_MODEL": "openai/scripted-vision"})
        emulator = build_emulator(load_settings())
        installed = install_skills(emulator.runtime, "http:skilled", 200)
        rows = []
        loaded: tuple[int, int] | None = None
        with serve(emulator.app(tick_seconds=3600)) as iris:
            runs = [("plain", "0 skills"), ("skilled", f"{installed} skills"),
                    ("teamed", "team notes"), ("mixed", "team skills")]
            team_id = ""  # the team of the "teamed" run, which the "mixed" one joins
            for user, label in runs:
                if user == "mixed":  # 150 own + 50 team skills, in the same full team
                    own = install_skills(emulator.runtime, "http:mixed", 150)
                    shared = share_team_skills(emulator.runtime, team_id, 50)
                    label = f"{own} own + {shared} team skills + team notes"
                if user == "teamed":  # the 200-skill user, new session, in a full team
                    chars = fill_team_notes(emulator.runtime, "http:skilled")
                    lead = emulator.runtime.store.users.for_account("http:team-lead")
                    team_id = emulator.runtime.store.teams.find(lead, "bench-team").id
                    user, label = "skilled", f"{installed} skills + {chars:,}-char team notes"
                    httpx.post(f"{iris.url}/v1/chat/completions", timeout=120,
                               headers={"Authorization": "Bearer bench-key"},
                               json={"model": "iris", "user": user, "messages": [
                                   {"role": "user", "content": "/new"}]}).raise_for_status()
                llm.reply("ok")
                httpx.post(f"{iris.url}/v1/chat/completions", timeout=120,
                           headers={"Authorization": "Bearer bench-key"},
                           json={"model": "iris", "user": user, "messages": [
                               {"role": "user", "content": "Plan my week: check the sensor "
                                "data round-up and remind me about invoices on Friday."}]},
                           ).raise_for_status()
                body = llm.requests[-1]
                system = next(m["content"] for m in body["messages"] if m["role"] == "system")
                if isinstance(system, list):
                    system = "".join(part.get("text", "") for part in system)
                tools = body.get("tools", [])
                rows.append((label, len(enc.encode(system)),
                             len(enc.encode(json.dumps(tools))), tools, system))
            catalogue = [n for n in emulator.runtime.toolset.names() if n not in
                         {t["function"]["name"] for t in rows[0][3]}]
            assert llm.pending == 0, "a scripted reply was left unused"  # (/new calls no model)
            if "load_tools" in {t["function"]["name"] for t in rows[0][3]}:
                for at in range(0, len(catalogue), 20):  # load_tools takes 20 names a call
                    llm.tool_call("load_tools", {"names": catalogue[at:at + 20]})
                llm.reply("ok")
                httpx.post(f"{iris.url}/v1/chat/completions", timeout=120,
                           headers={"Authorization": "Bearer bench-key"},
                           json={"model": "iris", "user": "skilled", "messages": [
                               {"role": "user", "content": "Load everything."}]},
                           ).raise_for_status()
                every = llm.requests[-1]["tools"]
                loaded = (len(enc.encode(json.dumps(every))), len(every))
    print("fixed prompt, cl100k_base tokens (system message + tool schemas as sent):")
    for label, system, tools, sent, _ in rows:
        print(f"  {label:<11} system {system:>5}  tools {tools:>5} ({len(sent)} tools)  "
              f"total {system + tools:>5}")
    if loaded is not None:
        print(f"  once a session has loaded every catalogue tool: tools {loaded[0]:>5} "
              f"({loaded[1]} tools)")
    if args.show:
        print(rows[1][4])
    sent = rows[0][3]
    sizes = sorted(((len(enc.encode(json.dumps(t))), t["function"]["name"]) for t in sent),
                   reverse=True)
    print(f"largest tool schemas: {', '.join(f'{n} {c}' for c, n in sizes[:args.top])}")
    print(f"tools sent: {', '.join(sorted(t['function']['name'] for t in sent))}")


if __name__ == "__main__":
    main()
