import asyncio
from dataclasses import dataclass

from pydantic import SecretStr

from core.errors import ProviderError
from core.messages import InboundMessage
from functions.dispatch import LocalDispatcher
from functions.ingress import receive
from functions.runtime import compose
from iris_testing.scripted_model import ScriptedModel


@dataclass
class TwoModels:
    main_model: ScriptedModel
    side_model: ScriptedModel

    def main(self, override=None):
        return self.main_model

    def side(self):
        return self.side_model


def make_runtime(settings, store):
    router = TwoModels(ScriptedModel(name="main/big"), ScriptedModel(name="cheap/small"))
    configured = settings.model_copy(update={"api_key": SecretStr("k"), "session_titles": True})
    dispatcher = LocalDispatcher()
    rt = compose(configured, dispatcher=dispatcher, store=store, router=router)
    from core.sessions.titles import title_session

    rt.after_turn = [title_session]
    return rt, router


def send(rt, text, pmid):
    message = InboundMessage(platform="http", chat_id="alice", account="http:alice",
                             platform_message_id=pmid, text=text)

    async def go():
        received = await receive(rt, message)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return asyncio.run(go())


def test_first_exchange_is_titled_by_the_side_model_once(settings, store):
    rt, router = make_runtime(settings, store)
    router.main_model.then("Try a sourdough starter.", "Feed it daily.")
    router.side_model.then('"Sourdough starter help."')
    entry = send(rt, "how do I bake bread at home?", "1")
    session = store.sessions.get(entry.user_id, entry.session_id)
    assert session.title == "Sourdough starter help"
    prompt = router.side_model.requests[0][-1].content
    assert "bake bread" in prompt and "sourdough starter" in prompt
    send(rt, "and then?", "2")
    assert len(router.side_model.requests) == 1
    by_model = store.usage.by_model(entry.user_id)
    assert by_model["cheap/small"].calls == 1 and by_model["main/big"].calls == 2


def test_a_failed_title_is_retried_on_the_next_turn(settings, store):
    rt, router = make_runtime(settings, store)
    router.main_model.then("a", "b")
    router.side_model.then(ProviderError("timeout", "slow", retryable=True), "Garden plans")
    first = send(rt, "plan my garden", "1")
    assert store.sessions.get(first.user_id, first.session_id).title is None
    send(rt, "tomatoes?", "2")
    assert store.sessions.get(first.user_id, first.session_id).title == "Garden plans"


def test_title_command_sets_and_shows(settings, store):
    rt, _ = make_runtime(settings, store)
    entry = send(rt, "/title Tax return 2024", "1")
    assert entry.reply == "Session titled: Tax return 2024"
    assert "Tax return 2024" in send(rt, "/title", "2").reply


def test_without_a_model_able_to_title_the_first_words_name_the_session(settings, store):
    """The embedded demo's setting: no side-model call, the first message's first words."""
    rt, router = make_runtime(settings.model_copy(update={"session_titles_by_model": False}),
                              store)
    router.main_model.then("Try a sourdough starter.", "Feed it daily.")
    entry = send(rt, "how   do I bake\nbread at home without yeast?", "1")
    assert store.sessions.get(entry.user_id, entry.session_id).title == "how do I bake bread at…"
    send(rt, "and then?", "2")
    assert store.sessions.get(entry.user_id, entry.session_id).title == "how do I bake bread at…"
    assert router.side_model.requests == []
