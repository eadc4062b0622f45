import asyncio
import itertools

from core.identity.access import check_access
from core.messages import InboundMessage
from functions.ingress import receive

_ids = itertools.count(1)


def message(account, text="hi", *, chat=None, group=False, name=None):
    platform, ident = account.split(":", 1)
    return InboundMessage(
        platform=platform, chat_id=chat or ident, account=account,
        platform_message_id=f"{account}:{next(_ids)}", text=text, is_group=group,
        display_name=name,
    )


def deliver(rt, msg, owner=None):
    """What a webhook does: check access, then record and run the turn. Returns
    (decision, finished inbox entry or None)."""
    decision = check_access(rt.store, rt.settings, msg)
    if not decision.allowed:
        return decision, None

    async def go():
        received = await receive(rt, msg, owner=owner)
        await rt.dispatcher.idle()
        return rt.store.inbox.get(received.user_id, received.entry_id)

    return decision, asyncio.run(go())
