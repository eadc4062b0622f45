"""Recall fixes for long real chats: dates resolved against the clock, speakers by name; the
turn next to a match is shown beside it, not ranked as a hit."""

from datetime import UTC, datetime

import pytest

from core.clock import ManualClock
from core.search import dates
from core.search.engine import search_messages
from core.search.grouping import group_hits
from core.store.search import Filters
from core.store.transcripts import ImportedMessage


def ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


SUNDAY = ts("2018-05-20T12:00:00")


@pytest.fixture
def clock():
    return ManualClock(SUNDAY)


def day(window: dates.Window | None) -> tuple[str, str]:
    assert window is not None
    return (datetime.fromtimestamp(window.since, UTC).date().isoformat(),
            datetime.fromtimestamp(window.until, UTC).date().isoformat())


@pytest.mark.parametrize(("text", "span", "rest"), [
    ("What did I do last Tuesday?", ("2018-05-15", "2018-05-16"), "What did I do?"),
    ("what chores did I get done on Thursday", ("2018-05-17", "2018-05-18"),
     "what chores did I get done"),
    ("On May 1, what did I say about snow?", ("2018-05-01", "2018-05-02"),
     "what did I say about snow?"),
    ("the 3rd of May", ("2018-05-03", "2018-05-04"), ""),
    ("what did Rowan say yesterday", ("2018-05-19", "2018-05-20"), "what did Rowan say"),
    ("dinner three days ago", ("2018-05-16", "2018-05-19"), "dinner"),
    ("plans last week", ("2018-05-07", "2018-05-14"), "plans"),
    ("gift on December 25", ("2017-12-25", "2017-12-26"), "gift"),  # the past one
    ("notes from 2018-04-30", ("2018-04-30", "2018-05-01"), "notes from"),
])
def test_dates_and_relative_times_resolve_against_the_clock(text, span, rest):
    window = dates.resolve(text, SUNDAY)
    assert day(window) == span
    assert window is not None and window.text == rest


def test_text_without_dates_resolves_to_nothing():
    assert dates.resolve("When did I have a dentist appointment?", SUNDAY) is None
    assert dates.resolve("I may go to the gym", SUNDAY) is None
    assert dates.resolve("February 30", SUNDAY) is None


def test_sunday_asked_on_a_sunday_is_today_unless_last():
    window = dates.resolve("on Sunday", SUNDAY)  # today, up to now
    assert window is not None
    assert (window.since, window.until) == (ts("2018-05-20T00:00:00"), SUNDAY)
    assert day(dates.resolve("last Sunday", SUNDAY)) == ("2018-05-13", "2018-05-14")


def chat(store, account, session, turns, *, at):
    """``turns``: (speaker or None for the user, text); the other speaker's turns are assistant
    messages named after them."""
    user = store.users.for_account(account)
    messages = [
        ImportedMessage(role="user" if name is None else "assistant", content=text,
                        created_at=at + 60 * i, external_id=f"{session}-{i}", name=name)
        for i, (name, text) in enumerate(turns)
    ]
    store.transcripts.import_session(user, external_id=session, started_at=at, title=None,
                                     messages=messages)
    return user


def test_a_day_in_the_query_puts_that_days_messages_first(store):
    user = chat(store, "http:alice", "tue", [(None, "Lunch today was a burrito.")],
                at=ts("2018-05-15T13:00:00"))
    chat(store, "http:alice", "fri", [(None, "Lunch today was noodles again.")],
         at=ts("2018-05-18T13:00:00"))
    hits = search_messages(store, user, "What did I have for lunch last Tuesday?",
                           semantic=False, now=SUNDAY)
    assert [h.external_id for h in hits] == ["tue-0", "fri-0"]
    # the clock decides what "last Tuesday" means
    later = search_messages(store, user, "lunch last Friday", semantic=False,
                            now=ts("2018-05-23T09:00:00"))
    assert later[0].external_id == "fri-0"


def test_days_are_the_users_days_in_their_time_zone():
    """Tuesday evening in Chicago is Wednesday in UTC: asked in Chicago, "on Tuesday" is the
    Chicago day; an unknown zone counts as UTC."""
    from zoneinfo import ZoneInfo

    window = dates.resolve("on Tuesday", SUNDAY, ZoneInfo("America/Chicago"))
    assert window is not None
    assert (window.since, window.until) == (ts("2018-05-15T05:00:00"), ts("2018-05-16T05:00:00"))


def test_a_search_reads_dates_in_the_deployments_time_zone(store):
    # 21:30 on Tuesday in Chicago is 02:30 on Wednesday in UTC
    user = chat(store, "http:alice", "tue", [(None, "Dinner was a burrito.")],
                at=ts("2018-05-16T02:30:00"))
    chat(store, "http:alice", "wed", [(None, "Dinner was noodles again.")],
         at=ts("2018-05-17T02:30:00"))
    ask = "What did I have for dinner on Wednesday?"
    local = search_messages(store, user, ask, semantic=False, now=SUNDAY,
                            timezone="America/Chicago")
    assert local[0].external_id == "wed-0"
    in_utc = search_messages(store, user, ask, semantic=False, now=SUNDAY)
    assert in_utc[0].external_id == "tue-0"  # Tuesday night in Chicago is Wednesday in UTC
    unknown = search_messages(store, user, ask, semantic=False, now=SUNDAY, timezone="Mars/Base")
    assert unknown[0].external_id == "tue-0"


def test_the_store_clock_is_the_default_now(store, clock):
    user = chat(store, "http:alice", "tue", [(None, "Lunch today was a burrito.")],
                at=ts("2018-05-15T13:00:00"))
    chat(store, "http:alice", "fri", [(None, "Lunch today was noodles again.")],
         at=ts("2018-05-18T13:00:00"))
    hits = search_messages(store, user, "lunch on Tuesday", semantic=False)
    assert hits[0].external_id == "tue-0"
    clock.set(ts("2018-05-23T09:00:00"))
    assert search_messages(store, user, "lunch on Friday", semantic=False)[0].external_id \
        == "fri-0"


def test_a_named_speakers_turns_are_lifted_and_the_name_is_not_a_search_word(store):
    user = chat(store, "http:alice", "s1", [
        (None, "The weather was awful."),
        ("Marcus", "I love this weather, honestly."),
    ], at=ts("2018-05-02T10:00:00"))
    about_marcus = search_messages(store, user, "What did Marcus say about the weather?",
                                   semantic=False, now=SUNDAY)
    assert about_marcus[0].external_id == "s1-1"
    assert about_marcus[0].signals == ("lexical",)
    # the user is the subject: the name only goes
    mine = search_messages(store, user, "What did I tell Marcus about the weather?",
                           semantic=False, now=SUNDAY)
    assert mine[0].external_id == "s1-0"
    # another user's speakers are not this user's
    other = chat(store, "http:bob", "b1", [(None, "Marcus said the weather was fine.")],
                 at=ts("2018-05-02T10:00:00"))
    [hit] = search_messages(store, other, "Marcus weather", semantic=False, now=SUNDAY)
    assert hit.external_id == "b1-0"


def test_only_what_matched_is_a_hit_and_the_answer_next_to_it_is_shown_beside_it(store):
    """The turns next to a match are not lifted into the hits (that earned nothing on the
    held-out real-chat questions); the session_search tool's groups show them beside the hit."""
    user = chat(store, "http:alice", "s1", [
        ("Marcus", "So what is your major again?"),
        (None, "Applied and computational mathematics, one of the three math programs."),
        ("Marcus", "Nice, mine is information technology."),
        (None, "Cool."),
    ], at=ts("2018-04-24T14:00:00"))
    chat(store, "http:alice", "s2", [(None, "My major complaint is the parking.")],
         at=ts("2018-05-01T14:00:00"))
    hits = search_messages(store, user, "What did I say my major was?", semantic=False,
                           now=SUNDAY)
    assert sorted(h.external_id for h in hits) == ["s1-0", "s2-0"]
    assert all(h.signals == ("lexical",) for h in hits)
    [group] = [g for g in group_hits(store, user, hits) if g.external_id == "s1"]
    shown = [m.external_id for window in group.windows for m in window]
    assert shown == ["s1-0", "s1-1"]
    # filters hold: only the user's own turns were asked for
    mine = search_messages(store, user, "mathematics major", semantic=False, now=SUNDAY,
                           filters=Filters(role="user"))
    assert {h.external_id for h in mine} == {"s1-1", "s2-0"}
