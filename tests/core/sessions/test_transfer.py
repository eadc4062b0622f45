import json

import pytest

from core.errors import IrisUsageError
from core.messages import Message, ToolCall
from core.sessions.transfer import export_sessions, import_sessions, read_lines


def line(**overrides):
    base = {
        "user": "alice", "session_id": "s1", "started_at": "2024-05-01T10:00:00Z",
        "title": "Trip", "messages": [
            {"role": "user", "content": "Book Lisbon", "id": "m1", "has_answer": True},
            {"role": "assistant", "content": "Booked.", "timestamp": "2024-05-01T10:01:00+02:00"},
        ],
    }
    base.update(overrides)
    return json.dumps(base)


def test_import_keeps_ids_times_titles_and_creates_http_users(store):
    report = import_sessions(store, read_lines([line(), line(session_id="s2", user="bob")]))
    assert (report.sessions, report.messages, report.skipped) == (2, 4, 0)
    alice = store.users.resolve("http:alice")
    assert store.users.resolve("alice") == alice == report.users["alice"]
    session = store.sessions.get(alice, "s1")
    assert session.title == "Trip" and session.started_at == 1714557600.0
    assert session.ended_at is not None, "an imported session is never a chat's open session"
    first, second = store.messages.for_session(alice, "s1")
    assert first.external_id == "m1" and second.external_id is None
    assert first.created_at == 1714557600.0 and second.created_at == 1714550460.0


def test_existing_users_are_found_by_id_or_account(store):
    user = store.users.for_account("telegram:42")
    report = import_sessions(store, read_lines([line(user="telegram:42"),
                                                line(user=user, session_id="s2")]))
    assert set(report.users.values()) == {user}
    with pytest.raises(IrisUsageError):
        import_sessions(store, read_lines([line(user="ghost", session_id="s3")]),
                        create_users=False)


def test_reimport_is_a_no_op_and_a_conflict_changes_nothing(store):
    import_sessions(store, read_lines([line()]))
    again = import_sessions(store, read_lines([line()]))
    assert (again.sessions, again.skipped) == (0, 1)
    before = store.db.scalar("SELECT count(*) FROM messages")
    changed = line(messages=[{"role": "user", "content": "different"}])
    with pytest.raises(IrisUsageError, match="already imported"):
        import_sessions(store, read_lines([line(session_id="new"), changed]))
    assert store.db.scalar("SELECT count(*) FROM messages") == before
    assert store.db.scalar("SELECT count(*) FROM sessions WHERE external_id = 'new'") == 0


@pytest.mark.parametrize("bad, message", [
    ("{not json", "f.jsonl:2: not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (line(started_at="yesterday"), "started_at: not an ISO-8601 time"),
    (line(messages=[{"role": "robot", "content": "x"}]), "messages.0.role"),
    (line(messages=[{"role": "user"}]), "messages.0.content"),
    (json.dumps({"user": "a", "started_at": "2024-01-01", "messages": []}), "session_id"),
    (line(messages=[{"role": "assistant", "content": "",
                     "tool_calls": [{"function": {"name": "clock"}}]}]),
     "messages.0.tool_calls.*call 0 needs an id"),
    (line(messages=[{"role": "assistant", "content": "",
                     "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]}]),
     "call 0 needs an id and function.name"),
])
def test_bad_lines_are_named_and_nothing_is_written(store, bad, message):
    with pytest.raises(IrisUsageError, match=message):
        read_lines([line(session_id="ok"), bad], source="f.jsonl")
    assert store.db.scalar("SELECT count(*) FROM sessions") == 0


def tool_session(store):
    user = store.users.for_account("http:alice")
    session = store.sessions.start(user, "http:alice", "http", at=1_700_000_000.0)
    store.sessions.freeze_prompt(user, session.id, "You are Iris.")
    call = ToolCall(id="c1", name="clock", arguments='{"timezone": "UTC"}')
    store.messages.insert(user, session.id, [
        Message(role="user", content="time?"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="12:00 UTC", tool_call_id="c1", name="clock"),
        Message(role="assistant", content="It is noon."),
    ], at=1_700_000_001.0)
    return user, session


def test_export_formats_keep_tool_calls(store):
    user, _ = tool_session(store)
    [openai] = export_sessions(store, [user], fmt="openai-jsonl")
    roles = [m["role"] for m in openai["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert openai["messages"][2]["tool_calls"][0]["function"]["name"] == "clock"
    assert openai["messages"][3]["tool_call_id"] == "c1"
    [share] = export_sessions(store, [user], fmt="sharegpt")
    assert [t["from"] for t in share["conversations"]] == [
        "system", "human", "function_call", "observation", "gpt"]
    assert json.loads(share["conversations"][2]["value"]) == {
        "name": "clock", "arguments": {"timezone": "UTC"}}
    assert list(export_sessions(store, [user], fmt="sharegpt", since=1_800_000_000.0)) == []
    with pytest.raises(IrisUsageError, match="unknown export format"):
        list(export_sessions(store, [user], fmt="csv"))


def test_iris_export_round_trips_through_import(store, tmp_path):
    user, session = tool_session(store)
    [record] = export_sessions(store, [user], fmt="iris")
    record["user"] = "carol"
    report = import_sessions(store, read_lines([json.dumps(record)]))
    carol = report.users["carol"]
    [copy] = store.transcripts.sessions(carol)
    original = [m.message for m in store.messages.for_session(user, session.id)]
    assert [m.message for m in store.messages.for_session(carol, copy.session.id)] == original


PNG_BYTES = bytes.fromhex("89504e470d0a1a0a") + b"\x00" * 24


def image_line(session_id="p1", data=PNG_BYTES, **item):
    import base64

    item.setdefault("data_url", "data:image/png;base64," + base64.b64encode(data).decode())
    return line(session_id=session_id, messages=[
        {"role": "user", "content": "look", "id": "m1", "images": [item]},
        {"role": "assistant", "content": "Seen."}])


def image_keys(store, user):
    return sorted(store.objects.list(user, "images/"))


def test_a_failed_import_takes_back_the_images_it_stored(store):
    import_sessions(store, read_lines([line()]))
    alice = store.users.resolve("alice")
    conflicting = line(messages=[{"role": "user", "content": "different"}])
    with pytest.raises(IrisUsageError, match="already imported"):
        import_sessions(store, read_lines([image_line(), conflicting]))
    assert image_keys(store, alice) == []
    assert store.db.scalar("SELECT count(*) FROM sessions WHERE external_id = 'p1'") == 0


def test_a_session_imported_without_its_images_gets_them_once(store):
    record = json.loads(image_line())
    bare = dict(record, messages=[{k: v for k, v in m.items() if k != "images"}
                                  for m in record["messages"]])
    import_sessions(store, read_lines([json.dumps(bare)]))  # as the old import left it
    alice = store.users.resolve("alice")
    again = import_sessions(store, read_lines([json.dumps(record)]))
    assert (again.sessions, again.skipped, again.images_stored) == (0, 1, 1)
    first, second = store.messages.for_session(alice, "p1")
    assert len(first.message.images) == 1 and second.message.images == ()
    keys = image_keys(store, alice)
    third = import_sessions(store, read_lines([json.dumps(record)]))
    assert third.images_stored == 0 and image_keys(store, alice) == keys


def test_an_id_without_bytes_links_only_the_users_own_image(store):
    from core.intake.images import image_key

    alice = store.users.for_account("http:alice")
    store.objects.put(alice, image_key("img_00000000000000b1"), PNG_BYTES)
    report = import_sessions(store, read_lines([
        image_line(id="img_00000000000000b1", data_url=None),
        image_line("p2", id="img_00000000000000b2", data_url=None)]))
    assert report.images_stored == 1 and report.images_dropped == {"missing": 1}
    assert "has no bytes for img_00000000000000b2" in report.image_notes[0]
    [ref] = store.messages.for_session(alice, "p1")[0].message.images
    assert ref.id == "img_00000000000000b1"
    assert store.messages.for_session(alice, "p2")[0].message.images == ()


def test_a_file_id_holding_other_bytes_gets_a_fresh_id(store):
    from core.intake.images import image_key, load_image

    alice = store.users.for_account("http:alice")
    store.objects.put(alice, image_key("img_00000000000000c1"), b"GIF89a-other")
    import_sessions(store, read_lines([image_line(id="img_00000000000000c1")]))
    [ref] = store.messages.for_session(alice, "p1")[0].message.images
    assert ref.id != "img_00000000000000c1"
    assert load_image(store.objects, alice, ref.id) == ("image/png", PNG_BYTES)
    assert store.objects.get(alice, image_key("img_00000000000000c1")).data == b"GIF89a-other"


def test_unsupported_content_parts_are_refused_by_line():
    bad = line(messages=[{"role": "user", "content": [{"type": "input_audio", "x": 1}]}])
    with pytest.raises(IrisUsageError, match=r"f\.jsonl:1: .*'input_audio' is not supported"):
        read_lines([bad], source="f.jsonl")
