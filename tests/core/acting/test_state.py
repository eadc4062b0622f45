import pytest


def test_sandbox_state_round_trip_per_user_and_backend(store):
    states = store.sandbox_states
    assert states.get_sandbox_state("u1", "modal") is None
    states.put_sandbox_state("u1", "modal", {"image_id": "im-1"})
    states.put_sandbox_state("u1", "modal", {"image_id": "im-2"})
    states.put_sandbox_state("u2", "modal", {"image_id": "im-9"})
    assert states.get_sandbox_state("u1", "modal") == {"image_id": "im-2"}
    assert states.get_sandbox_state("u2", "modal") == {"image_id": "im-9"}
    assert states.get_sandbox_state("u1", "daytona") is None


def test_bad_state_is_refused_and_changes_nothing(store):
    states = store.sandbox_states
    states.put_sandbox_state("u1", "modal", {"image_id": "im-1"})
    with pytest.raises(ValueError, match="strings to strings"):
        states.put_sandbox_state("u1", "modal", {"image_id": 3})
    assert states.get_sandbox_state("u1", "modal") == {"image_id": "im-1"}


def test_held_commands_claim_once(store):
    held = store.held
    first = held.hold("u1", chat_key="http:a", session_id=None, command="x", workdir=None,
                      timeout=None, reason="r", ttl=60)
    assert first.number == 1 and first.status == "pending"
    assert held.claim("u1", 1) is True
    assert held.claim("u1", 1) is False
    assert held.deny("u1", 1) is False
    held.finish("u1", 1, exit_code=0, output="ok")
    assert (held.get("u1", 1).status, held.get("u1", 1).output) == ("done", "ok")
    assert held.get("u2", 1) is None
