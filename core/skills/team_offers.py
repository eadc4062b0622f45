"""Team skills inside a member's library view: the approved version of each skill of every team
the member belongs to now (``store.team_skills.offered``), offered beside their own and the
bundled ones, with provenance ("team eng, shared by telegram:42, v2"). The member's own skill of
the same name wins (private stays private), a team skill wins over a bundled one.

A shared copy is text only (at most ``SHARE_MAX_BYTES``), parsed like a library skill and
scanned like an imported one (``core.skills.findings``, findings at file:line): a version with
findings is held as quarantined and never offered. A member's change to a team skill is not
made in place: it is proposed as the team skill's next version (``propose_files``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from core.errors import IrisUsageError
from core.skills.findings import scan_files
from core.skills.format import SkillParseError, parse_skill
from core.skills.paths import MAX_FILES
from core.skills.records import SkillEntry, SkillUsage
from core.store.team_skills import OfferedSkill, Proposal, TeamSkillVersion

if TYPE_CHECKING:
    from core.skills.snapshot import SkillSnapshot
    from core.store import Store

SHARE_MAX_BYTES = 256 * 1024
SKILL_MD = "SKILL.md"


def provenance(store: Store, team_name: str, proposer: str, version: int) -> str:
    accounts = store.users.accounts(proposer)
    return f"team {team_name}, shared by {accounts[0] if accounts else proposer}, v{version}"


def entry_of(store: Store, offer: OfferedSkill, usage: SkillUsage) -> SkillEntry:
    return SkillEntry(
        name=offer.name, description=offer.description, tags=offer.tags,
        category=offer.category, origin="team", provenance="team", version=offer.version,
        files=(), search_text=offer.search_text,
        source=provenance(store, offer.team_name, offer.proposer, offer.version),
        created_at=offer.created_at, updated_at=offer.approved_at, usage=usage,
        team_id=offer.team_id,
    )  # fmt: skip


def team_entries(store: Store, user_id: str, usage: Mapping[str, SkillUsage]) -> list[SkillEntry]:
    """The approved skills of ``user_id``'s teams, one per name (the earliest joined team's)."""
    seen: dict[str, SkillEntry] = {}
    for offer in store.team_skills.offered(user_id):
        if offer.name not in seen:
            seen[offer.name] = entry_of(store, offer, usage.get(offer.name, SkillUsage()))
    return list(seen.values())


def team_files(store: Store, user_id: str, entry: SkillEntry) -> dict[str, bytes]:
    """The team skill's files, read through the store's membership check."""
    from core.errors import NotFound
    from core.store.teams import NotAMember

    assert entry.team_id is not None
    try:
        found = store.team_skills.version(user_id, entry.team_id, entry.name, entry.version)
    except NotAMember:  # left the team since the entry was listed
        raise NotFound(f"no skill named {entry.name!r}") from None
    return {path: text.encode("utf-8") for path, text in found.files.items()}


def proposal(name: str, files: Mapping[str, bytes], note: str = "") -> Proposal:
    """A version to propose: text files only, within the share limit, parsed, and scanned (the
    findings kept, at file:line). Raises ``IrisUsageError`` on what cannot be shared."""
    if SKILL_MD not in files:
        raise IrisUsageError(f"skill {name!r} has no SKILL.md")
    if len(files) > MAX_FILES:
        raise IrisUsageError(f"a team skill holds at most {MAX_FILES} files")
    if sum(len(d) for d in files.values()) > SHARE_MAX_BYTES:
        raise IrisUsageError(f"a team skill holds at most {SHARE_MAX_BYTES // 1024} KiB of files")
    texts: dict[str, str] = {}
    for path, data in files.items():
        try:
            texts[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise IrisUsageError(
                f"{path} is not text; a team skill holds text files only"
            ) from None
    try:
        parsed = parse_skill(texts[SKILL_MD], dir_name=name)
    except SkillParseError as error:
        raise IrisUsageError(f"SKILL.md of {name!r} is not usable: {error}") from None
    return Proposal(
        name=name, description=parsed.description, tags=tuple(parsed.tags),
        category=parsed.category, search_text=parsed.body[:4000], files=texts,
        findings=[f.as_dict() for f in scan_files(files)], note=note,
    )  # fmt: skip


def propose_files(
    store: Store, user_id: str, current: SkillSnapshot,
    write: Mapping[str, bytes], remove: frozenset[str], note: str,
) -> TeamSkillVersion:  # fmt: skip
    """A member's change to the team skill ``current`` as its next proposed version."""
    assert current.entry.team_id is not None
    files = {p: current.data(p) for p in current.paths if p not in remove}
    files.update(write)
    made = proposal(current.entry.name, files, note)
    return store.team_skills.propose(user_id, current.entry.team_id, made)
