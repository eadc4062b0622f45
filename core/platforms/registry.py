"""Platforms as plugins: each platform's module defines its ``PlatformSpec`` (what it is, how
replies are addressed, its sender and formatter), and ``PLATFORMS`` below is the one place
they are registered.

Adding a platform: its own modules (a spec, a sender and a parser in ``core/platforms/``, a
webhook router in ``functions/``) and one line in ``PLATFORMS``. Importing this module is cheap:
senders import their client libraries on first use.
"""

from __future__ import annotations

from core.platforms import discord, googlechat, mail, slack, teams, telegram, whatsapp
from core.platforms import line as line_platform
from core.platforms import matrix as matrix_platform
from core.platforms import sms as sms_platform
from core.platforms.spec import Platforms, PlatformSpec

HTTP = PlatformSpec(
    name="http", trusted=True, interactive=True, inbox=True,
    prompt_hint="You are answering through an API: plain Markdown.",
)
CLI = PlatformSpec(name="cli", trusted=True, interactive=True, inbox=True)
CRON = PlatformSpec(
    name="cron", trusted=True, unattended=True,
    prompt_hint="You are running a scheduled job: produce the report the job asks for. If "
    "there is nothing worth reporting, answer exactly [SILENT].",
)

PLATFORMS = Platforms([HTTP, CLI, CRON, telegram.SPEC, slack.SPEC, whatsapp.SPEC,
                       discord.SPEC, mail.SPEC,
                       teams.SPEC, googlechat.SPEC,
                       line_platform.SPEC,
                       sms_platform.SPEC,
                       matrix_platform.SPEC])
