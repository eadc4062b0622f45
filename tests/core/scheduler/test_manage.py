"""Creating and changing jobs: validation, plain-language schedules via the side model,
delivery targets, names, limits and tenancy."""

from __future__ import annotations

import asyncio

import pytest

from core.errors import IrisUsageError, NotFound
from core.messages import InboundMessage
from core.scheduler import manage
from core.scheduler.jobs import CronJobs
from core.scheduler.manage import Actor, create_job, pause_job, update_job
from core.scheduler.targets import NO_TARGET, latest_chat, origin_of
from tests.clocks import NOW
from tests.core.scheduler.cron_helpers import MINUTE, make_job, utc


def actor(store, account="http:alice", **kwargs):
    return Actor(user_id=store.users.for_account(account), account=account, **kwargs)


def create(store, settings, who=None, **fields):
    fields.setdefault("prompt", "say hi")
    return asyncio.run(create_job(store, settings, who or actor(store), **fields))


def telegram_message(chat_id="4242", user="4242", n=1, group=False, thread=None):
    return InboundMessage(platform="telegram", chat_id=chat_id, account=f"telegram:{user}",
                          platform_message_id=f"{chat_id}:{n}", text="hi", is_group=group,
                          thread_id=thread, meta={"message_id": n, "quote": group})


def test_a_schedule_the_parser_refuses_changes_nothing(store, settings):
    with pytest.raises(IrisUsageError, match="every 15m"):
        create(store, settings, schedule="whenever it suits you")
    with pytest.raises(IrisUsageError, match="too frequent"):
        create(store, settings, schedule="every 10 seconds")
    with pytest.raises(IrisUsageError, match="in the past"):
        create(store, settings, schedule="2020-01-01T09:00")
    with pytest.raises(IrisUsageError, match="unknown timezone"):
        create(store, settings, schedule="daily at 9", timezone="Mars/Olympus")
    with pytest.raises(IrisUsageError, match="prompt"):
        create(store, settings, schedule="daily at 9", prompt="  ")
    assert store.db.scalar("SELECT count(*) FROM cron_jobs") == 0


def test_plain_language_goes_to_the_side_model_and_must_parse(store, settings, scripted):
    scripted.then("0 9 * * 1")
    job = create(store, settings, actor(store, model=scripted),
                 schedule="at the start of every work week around nine")
    assert (job.schedule.kind, job.schedule.expr) == ("cron", "0 9 * * 1")
    assert job.schedule_text == "at the start of every work week around nine"
    (request,) = scripted.requests
    assert "5-field cron" in request[0].content
    assert "Monday 2026-11-23 10:00 (UTC)" in request[1].content


@pytest.mark.parametrize("answer", ["whenever you like", "NONE", "every 5 seconds", ""])
def test_a_model_answer_that_does_not_parse_is_refused_with_examples(store, settings, scripted,
                                                                     answer):
    scripted.then(answer)
    with pytest.raises(IrisUsageError, match=r"can't understand.*daily at 09:00"):
        create(store, settings, actor(store, model=scripted), schedule="when the moon is full")
    assert store.db.scalar("SELECT count(*) FROM cron_jobs") == 0


def test_readable_but_invalid_schedules_are_not_sent_to_the_model(store, settings, scripted):
    with pytest.raises(IrisUsageError, match="too frequent"):
        create(store, settings, actor(store, model=scripted), schedule="every 10 seconds")
    assert scripted.requests == []


def test_a_relative_one_shot_is_in_the_future_and_intervals_start_on_the_minute(store,
                                                                              settings):
    at = utc(2026, 11, 23, 10, 0)
    store.clock.set(at.replace(second=37))
    job = create(store, settings, schedule="every minute")
    assert job.next_run_at == (at + MINUTE).timestamp()


def test_delivery_defaults_to_the_chat_it_was_created_in(store, settings):
    user_id = store.users.for_account("telegram:4242")
    entry_id = store.inbox.add(user_id, telegram_message())
    origin = origin_of(store, user_id, inbox_id=entry_id)
    job = create(store, settings, actor(store, "telegram:4242", origin=origin),
                 schedule="daily at 9")
    assert job.target.platform == "telegram" and job.target.chat_key == "telegram:4242"
    assert job.target.address == {"chat_id": "4242", "thread_id": None}  # no quoting


def test_deliver_forms(store, settings):
    user_id = store.users.for_account("telegram:4242")
    store.inbox.add(user_id, telegram_message(chat_id="-100777", n=1, group=True))
    store.inbox.add(user_id, telegram_message(n=2))
    who = actor(store, "telegram:4242")
    assert create(store, settings, who, schedule="daily at 9", deliver="none",
                  name="a").target == NO_TARGET
    latest = create(store, settings, who, schedule="daily at 9", deliver="telegram", name="b")
    assert latest.target.chat_key == "telegram:4242"  # the private chat before the group
    group = create(store, settings, who, schedule="daily at 9", deliver="telegram:-100777",
                   name="c")
    assert group.target.address["chat_id"] == "-100777"
    with pytest.raises(IrisUsageError, match="not a chat you talk to Iris in"):
        create(store, settings, who, schedule="daily at 9", deliver="telegram:999", name="d")
    with pytest.raises(IrisUsageError, match="no slack chat"):
        create(store, settings, who, schedule="daily at 9", deliver="slack", name="e")
    with pytest.raises(IrisUsageError, match="unknown delivery target"):
        create(store, settings, who, schedule="daily at 9", deliver="fax:+4930123456", name="f")
    with pytest.raises(IrisUsageError, match="not a Telegram chat"):
        create(store, settings, who, schedule="daily at 9", deliver="telegram:abc", name="g")
    owner = actor(store, "telegram:4242", privileged=True)
    anywhere = create(store, settings, owner, schedule="daily at 9", deliver="slack:T1:C0ABC",
                      name="h")
    assert anywhere.target.address == {"chat_id": "T1:C0ABC", "thread_id": None,
                                       "channel": "C0ABC", "thread_ts": None}


def test_a_cron_runs_own_jobs_deliver_to_the_parent_jobs_target(store, settings):
    user_id = store.users.for_account("telegram:4242")
    store.inbox.add(user_id, telegram_message())
    parent = create(store, settings, actor(store, "telegram:4242"), schedule="daily at 9",
                    deliver="telegram")
    from core.scheduler.runs import claim_manual

    claimed = claim_manual(store, settings, user_id, parent.id, owner="t")
    origin = origin_of(store, user_id, inbox_id=claimed.inbox_id)
    assert origin == parent.target


def test_latest_chat_prefers_private_chats(store):
    user_id = store.users.for_account("telegram:1")
    assert latest_chat(store, user_id) is None
    store.inbox.add(user_id, telegram_message(chat_id="1", user="1", n=1))
    store.inbox.add(user_id, telegram_message(chat_id="-5", user="1", n=2, group=True))
    assert latest_chat(store, user_id).chat_key == "telegram:1"


def test_names_are_unique_and_name_jobs(store, settings):
    job = create(store, settings, schedule="daily at 9", name="Morning brief")
    assert CronJobs(store).get(job.user_id, "morning BRIEF").id == job.id
    with pytest.raises(IrisUsageError, match="already have a job named"):
        create(store, settings, schedule="daily at 10", name="morning brief")
    with pytest.raises(IrisUsageError, match="look like an id"):
        create(store, settings, schedule="daily at 10", name="job_123")
    unnamed = create(store, settings, schedule="daily at 9", prompt="Summarise my open GitHub "
                     "issues and say which ones are blocked on review")
    assert unnamed.name == "Summarise my open GitHub issues and say which…"


def test_limits(store, settings, monkeypatch):
    monkeypatch.setattr(manage, "MAX_JOBS_PER_USER", 2)
    create(store, settings, schedule="daily at 9", name="one")
    create(store, settings, schedule="daily at 9", name="two")
    with pytest.raises(IrisUsageError, match="most allowed"):
        create(store, settings, schedule="daily at 9", name="three")
    with pytest.raises(IrisUsageError, match="provider/model"):
        create(store, settings, actor(store, "http:bob"), schedule="daily at 9", model="gpt4")
    with pytest.raises(IrisUsageError, match="no skill named nope"):
        create(store, settings, actor(store, "http:bob"), schedule="daily at 9", skills=["nope"])


def test_update_changes_only_what_is_given_and_replans(store, settings):
    job = make_job(store, settings, schedule="daily at 09:00", at=NOW, repeat=5)
    who = actor(store)
    renamed = asyncio.run(update_job(store, settings, who, job.id, name="brief",
                                     prompt="new prompt"))
    assert (renamed.name, renamed.prompt, renamed.next_run_at) == (
        "brief", "new prompt", job.next_run_at)
    moved = asyncio.run(update_job(store, settings, who, "brief", schedule="every 2h",
                                   timezone="Europe/Berlin"))
    assert moved.schedule.kind == "interval" and moved.timezone == "Europe/Berlin"
    assert moved.next_run_at == (NOW + 120 * MINUTE).timestamp() and moved.repeat == 5
    forever = asyncio.run(update_job(store, settings, who, job.id, repeat=0))
    assert forever.repeat is None
    with pytest.raises(IrisUsageError, match="nothing to change"):
        asyncio.run(update_job(store, settings, who, job.id))
    with pytest.raises(IrisUsageError, match="can't understand"):
        asyncio.run(update_job(store, settings, who, job.id, schedule="now and then"))
    assert CronJobs(store).get(job.user_id, job.id).schedule == forever.schedule


def test_another_user_cannot_see_or_touch_a_job(store, settings):
    job = create(store, settings, schedule="daily at 9")
    bob = store.users.for_account("http:bob")
    with pytest.raises(NotFound):
        CronJobs(store).get(bob, job.id)
    with pytest.raises(NotFound):
        pause_job(store, bob, job.id)
    assert CronJobs(store).list(bob) == [] and CronJobs(store).runs(bob, job.id) == []
    assert CronJobs(store).get(job.user_id, job.id).state == "active"
