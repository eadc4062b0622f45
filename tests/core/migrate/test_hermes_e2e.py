"""A Hermes home imported, then used through the real paths: Telegram webhook (FakeTelegram ⇄
uvicorn ⇄ Iris ⇄ litellm ⇄ ScriptedLLM), session search by meaning, the cron tick on a
ManualClock, and a second import that changes nothing."""

import asyncio
from datetime import timedelta

from core.clock import ManualClock
from core.migrate.hermes import import_hermes
from core.model.llm import LiteLLMModel
from functions.tick import run_tick
from iris_testing.hermes_home import write_home
from iris_testing.llm_server import ScriptedLLM
from iris_testing.platform_stack import platform_stack
from iris_testing.server import serve
from iris_testing.waiting import until
from tests.clocks import NOW
from tests.core.migrate.test_hermes_history import snapshot


def contents(request):
    return [m.get("content") for m in request["messages"] if isinstance(m.get("content"), str)]


def test_an_imported_home_goes_on_in_iris(iris_home, tmp_path):
    clock = ManualClock(NOW)
    home = write_home(tmp_path, NOW, profiles=())
    llm = ScriptedLLM()
    with serve(llm.app) as server, platform_stack(
        iris_home, clock=clock, IRIS_TELEGRAM_ACCESS="pairing",
        model=LiteLLMModel("openai/scripted-model", api_base=f"{server.url}/v1", api_key="k"),
    ) as stack:
        rt, telegram = stack.rt, stack.telegram
        ada = rt.store.users.for_account("http:ada")
        import_hermes(rt.store, rt.settings, ada, home, embed="fast")

        # Ada writes on Telegram ten minutes after Hermes' last answer: her imported session
        # goes on, with its history in the model's context (no pairing code: she is approved).
        llm.reply("Salmon treats for Miso, on Saturday.")
        stack.telegram_post(telegram.make_update("What did I ask you to remember?"))
        stack.wait(lambda: telegram.sent_messages(4242))
        assert telegram.sent_messages(4242)[-1]["text"] == "Salmon treats for Miso, on Saturday."
        seen = contents(llm.requests[-1])
        assert any("My cat Miso turns four" in c for c in seen)
        assert not any("It runs Ubuntu" in c for c in seen)  # the compressed-away parent
        imported = rt.store.imports.session_by_external(ada, "hermes:default:20261120_100000_a2")
        entry = rt.store.inbox.latest_messages(ada, chat_key="telegram:4242", limit=1)
        assert entry and rt.store.sessions.latest(ada, "telegram:4242").id == imported["id"]

        # session_search finds an imported message by meaning (no word in common).
        llm.tool_call("session_search", {"query": "Which database engine keeps our bills?"})
        llm.reply("You chose PostgreSQL.")
        stack.telegram_post(telegram.make_update("Remind me what we decided about storage."))
        stack.wait(lambda: len(telegram.sent_messages(4242)) == 2)
        results = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
        assert results and "PostgreSQL for the invoicing ledger" in results[-1]

        # The imported "every 30m" job (last run 20 minutes before the import) runs on the
        # next tick and its answer arrives in Ada's Telegram chat.
        llm.reply("The build is green.")
        # Telegram shows a message before the sender hears back and records it as sent: wait
        # for the record, or the clock moved past the send's claim lets the tick's sweep send
        # it again (it did, in the full suite: "You chose PostgreSQL." twice).
        stack.wait(stack.settled)
        clock.advance(timedelta(minutes=11))

        async def tick():
            report = await run_tick(rt)  # the run's turn is a task on this loop: keep it alive

            async def delivered() -> bool:
                if any(m["text"].startswith("⏰ Check the build")
                       for m in telegram.sent_messages(4242)):
                    return True
                # A send that failed waits for its retry time on the ManualClock: move the
                # clock there and sweep, as the next tick would. Only such a delivery moves
                # the clock: one still being sent keeps its claim (moving the clock past it
                # would let the sweep send it a second time).
                waiting = [d.next_attempt_at for d in rt.store.deliveries.for_chat(
                    ada, "telegram:4242") if d.status == "pending"
                    and d.next_attempt_at > clock.now()]
                if waiting:
                    clock.advance(timedelta(seconds=min(waiting) - clock.now()))
                    await rt.delivery.sweep()
                return False

            await until(delivered, "the job's delivery", timeout=90,
                        seen=lambda: (report, telegram.sent_messages(4242)[-1:]))
            return report

        report = asyncio.run(tick())
        assert report.cron_ran and not report.errors
        assert [m["text"] for m in telegram.sent_messages(4242)] == [
            "Salmon treats for Miso, on Saturday.", "You chose PostgreSQL.",
            "⏰ Check the build\n\nThe build is green."], [  # delivered once
            (d.id, d.source, d.status, d.attempts, d.last_error, d.platform_ids)
            for d in rt.store.deliveries.for_chat(ada, "telegram:4242")]
        delivered = telegram.sent_messages(4242)[-1]["text"]
        assert delivered == "⏰ Check the build\n\nThe build is green."
        # every turn's after-turn work (embeddings) done too: it writes message vectors
        stack.wait(stack.finished)

        # Importing again changes nothing.
        before = snapshot(rt.store)
        again = import_hermes(rt.store, rt.settings, ada, home, embed="fast")
        assert snapshot(rt.store) == before
        assert again["sessions"].counts["messages"] == 0 and not again["jobs"].taken
