"""The buttons Discord and WhatsApp questions carry, checked against each platform's limits as
the fakes check them (iris_testing/discord_api.components_problem, whatsapp_api.
interactive_problem): long choices, four choices, a question too long for WhatsApp's body."""

from core.asking.clarify import button_data, parse_button
from core.platforms.discord_buttons import answered_components, question_components
from core.platforms.whatsapp_buttons import question_interactive
from iris_testing.discord_api import components_problem
from iris_testing.whatsapp_api import interactive_problem

LONG = ["Cappuccino with oat milk and cinnamon", "Cappuccino with oat milk and nutmeg",
        "Tea"]


def test_discord_buttons_fit_discords_limits_and_carry_iris_data():
    choices = {"id": "q_abc123", "labels": [*LONG, "x" * 60]}
    components = question_components(choices)
    assert components_problem(components) is None
    (row,) = components
    assert [b["label"] for b in row["components"]] == choices["labels"]
    assert [parse_button(b["custom_id"]) for b in row["components"]] == [
        ("q_abc123", n) for n in range(1, 5)]
    answered = answered_components("q_abc123", tuple(choices["labels"]), 2)
    assert components_problem(answered) is None
    assert [(b["style"], b["disabled"]) for b in answered[0]["components"]] == [
        (2, True), (1, True), (2, True), (2, True)]


def test_whatsapp_buttons_are_numbered_and_cut_when_a_choice_is_too_long():
    sent = question_interactive("Which?", {"id": "q_abc123", "labels": LONG})
    assert sent is not None and interactive_problem(sent) is None
    titles = [b["reply"]["title"] for b in sent["action"]["buttons"]]
    assert titles == ["1. Cappuccino with…", "2. Cappuccino with…", "3. Tea"]
    assert all(len(t) <= 20 for t in titles)
    assert [b["reply"]["id"] for b in sent["action"]["buttons"]] == [
        button_data("q_abc123", n) for n in (1, 2, 3)]
    short = question_interactive("Which?", {"id": "q_1", "labels": ["Tea", "Coffee"]})
    assert short is not None
    assert [b["reply"]["title"] for b in short["action"]["buttons"]] == ["Tea", "Coffee"]


def test_whatsapp_four_choices_are_a_list_and_a_long_question_is_text():
    sent = question_interactive("Which?", {"id": "q_abc123", "labels": [*LONG, "Water"]})
    assert sent is not None and sent["type"] == "list" and interactive_problem(sent) is None
    assert question_interactive("x" * 1025, {"id": "q_1", "labels": ["A", "B"]}) is None
    assert interactive_problem({"type": "button", "body": {"text": "x"}, "action": {
        "buttons": [{"type": "reply", "reply": {"id": "a", "title": "y" * 21}}]}}) is not None
