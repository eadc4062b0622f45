"""The settings themselves: every field with its default and its check (see ``core.config``
for where values come from)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

DB_SCHEMES = ("file:", "libsql://", "https://", "http://", "wss://", "ws://")


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    home: Path
    config_path: Path | None = None

    model: str | None = None
    model_api_base: str | None = None
    model_api_key: SecretStr | None = None
    cheap_model: str | None = None
    # what a non-owner may pick with /model or a job's model; empty: model and cheap_model
    allowed_models: list[str] = Field(default_factory=list)
    model_timeout: float = Field(default=120.0, gt=0)
    model_retries: int = Field(default=2, ge=0, le=10)
    # auto: an openai/ model at model_api_base is called over HTTP directly (core/model/direct.py),
    # every other model through litellm; litellm: every model through litellm.
    model_client: Literal["auto", "litellm"] = "auto"
    model_free: bool = False  # the model runs here at no per-token price (the embedded demo)
    interactive_first: bool = False  # scheduled runs wait for chat turns (core/model/priority.py)
    # False: the main model is offered no tools (the embedded demo); replies then point to the
    # slash commands (/remember, /cron add) instead of asking the model
    model_uses_tools: bool = True
    context_window: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    # longest answer per model call, in tokens (litellm max_tokens); None: the provider's own cap
    max_output_tokens: int | None = Field(default=None, gt=0)

    api_key: SecretStr | None = None
    admin_api_key: SecretStr | None = None  # the admin and search APIs (/api/…)
    public_url: str | None = None

    db_url: str = ""
    db_auth_token: SecretStr | None = None
    objects_url: str = ""
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    s3_timeout: float = Field(default=60.0, gt=0)  # seconds to wait for an S3 answer
    # botocore's CRC checksums: "when_supported" sends every PutObject as aws-chunked with a
    # trailer (AWS accepts it; B2, older MinIO/Ceph and other S3-compatible stores refuse it)
    s3_request_checksum_calculation: Literal["when_required", "when_supported"] = "when_required"
    s3_response_checksum_validation: Literal["when_required", "when_supported"] = "when_required"

    timezone: str = "UTC"
    max_iterations: int = Field(default=20, ge=1, le=200)
    max_message_chars: int = Field(default=32_000, ge=100)
    # event webhooks (/hooks/<id>, docs/webhooks.md): body limit, signature replay window,
    # runs per minute per endpoint and per user
    event_hook_max_bytes: int = Field(default=256 * 1024, ge=1024, le=10 * 1024 * 1024)
    event_hook_replay_seconds: float = Field(default=300.0, ge=10)
    event_hook_runs_per_minute: int = Field(default=30, ge=1)
    event_hook_user_runs_per_minute: int = Field(default=120, ge=1)
    max_tool_output_chars: int = Field(default=50_000, ge=1_000)
    session_idle_hours: float = Field(default=6.0, gt=0)
    history_messages: int = Field(default=200, ge=2)
    compression_threshold: float = Field(default=0.5, gt=0.05, le=0.95)  # of the window
    prompt_caching: bool = True  # Anthropic cache_control breakpoints
    session_titles: bool = True  # name each session (the side model, or its first words)
    # False: titles are the first words of the session's first message (a model too small to
    # name a session, like the embedded demo)
    session_titles_by_model: bool = True
    lease_seconds: float = Field(default=90.0, ge=5)
    # Blocking work runs in bounded thread pools per purpose (core/lanes, docs/security.md):
    pool_threads: int = Field(default=16, ge=1, le=256)  # threads one lane runs at once
    pool_per_user: int = Field(default=2, ge=1, le=64)  # a user's jobs running at once, per lane
    pool_spare_threads: int = Field(default=32, ge=0, le=1024)  # replacements for stuck threads
    blocking_timeout: float = Field(default=120.0, gt=0, le=3600)  # per blocking call, seconds
    skill_import_timeout: float = Field(default=600.0, gt=0, le=7200)  # per skill import
    # a turn running longer (on the store's clock) is stopped and counts as a failed attempt
    turn_timeout: float = Field(default=900.0, gt=0, le=86_400)
    shutdown_seconds: float = Field(default=10.0, gt=0, le=600)  # SIGTERM: then exit regardless

    dispatcher: Literal["local", "modal"] = "local"
    # where a turn's message vectors are computed (core/search/after_turn.py): a niced child
    # process, this process after the turn, or only by searches and `iris sessions reindex`
    search_indexer: Literal["process", "inline", "off"] = "process"
    modal_app: str = Field(default="iris", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
    sandbox_backend: Literal["local", "modal", "daytona"] = "local"
    # local backend: "auto" isolates with bubblewrap when installed (and refuses to serve
    # several people or a messaging platform without it), "bwrap" demands it, "none" opts out
    sandbox_isolation: Literal["auto", "bwrap", "none"] = "auto"
    sandbox_network: bool = True  # isolated local commands reach the network
    sandbox_timeout: float = Field(default=60.0, ge=1, le=3600)
    sandbox_max_timeout: float = Field(default=600.0, ge=1, le=86_400)
    sandbox_idle_minutes: int = Field(default=15, ge=1, le=1440)
    sandbox_hibernate_after_turn: bool | None = None  # None: yes on modal, no elsewhere
    sandbox_image: str | None = None
    sandbox_modal_app: str = "iris-sandboxes"
    daytona_api_key: SecretStr | None = None
    daytona_api_url: str | None = None
    daytona_target: str | None = None
    daytona_snapshot: str | None = None
    dangerous_commands: Literal["approve", "refuse"] = "approve"
    dangerous_command_patterns: list[str] = Field(default_factory=list)
    approval_minutes: float = Field(default=30.0, gt=0, le=7 * 24 * 60)
    subagent_max_iterations: int = Field(default=15, ge=1, le=200)

    memory_limit_chars: int = Field(default=2_200, ge=100)
    user_limit_chars: int = Field(default=1_375, ge=100)
    memory_review_every: int = Field(default=10, ge=0)  # user turns between reviews; 0: never
    memory_review_at_session_end: bool = True
    memory_review_min_turns: int = Field(default=2, ge=1)  # unreviewed turns worth a review

    telegram_access: Literal["pairing", "allowlist", "open"] = "pairing"
    telegram_allow: list[str] = Field(default_factory=list)  # telegram:<id> or bare ids
    slack_access: Literal["pairing", "allowlist", "open"] = "pairing"
    slack_allow: list[str] = Field(default_factory=list)  # slack:<team>/<user> or bare ids
    whatsapp_access: Literal["pairing", "allowlist", "open"] = "pairing"
    whatsapp_allow: list[str] = Field(default_factory=list)  # whatsapp:<wa_id> or bare ids
    discord_access: Literal["pairing", "allowlist", "open"] = "pairing"
    discord_allow: list[str] = Field(default_factory=list)  # discord:<user id> or bare ids
    teams_access: Literal["pairing", "allowlist", "open"] = "pairing"
    teams_allow: list[str] = Field(default_factory=list)  # teams:<user id 29:…> or bare ids
    googlechat_access: Literal["pairing", "allowlist", "open"] = "pairing"
    googlechat_allow: list[str] = Field(default_factory=list)  # googlechat:users/<id>
    line_access: Literal["pairing", "allowlist", "open"] = "pairing"
    sms_access: Literal["pairing", "allowlist", "open"] = "pairing"
    matrix_access: Literal["pairing", "allowlist", "open"] = "pairing"
    matrix_allow: list[str] = Field(default_factory=list)  # matrix:@user:server or bare ids
    sms_allow: list[str] = Field(default_factory=list)  # sms:+<number> or bare numbers
    line_allow: list[str] = Field(default_factory=list)  # line:<user id> or bare ids
    email_access: Literal["pairing", "allowlist", "open"] = "pairing"
    email_allow: list[str] = Field(default_factory=list)  # email:<address> or bare addresses
    owner_accounts: list[str] = Field(default_factory=list)  # may /approve; e.g. telegram:42

    skills_dir: Path | None = None  # bundled skills; default: the repository's skills/
    skills_index_tokens: int = Field(default=1_400, ge=100)
    team_notes_prompt_tokens: int = Field(default=400, ge=50)  # team block, out of the index's
    skill_review_min_tool_calls: int = Field(default=5, ge=0)  # 0: never after busy turns
    skills_stale_days: float = Field(default=30.0, gt=0)
    skills_archive_days: float = Field(default=90.0, gt=0)

    telegram_token: SecretStr | None = None
    telegram_secret: SecretStr | None = None
    telegram_api_base: str = "https://api.telegram.org"
    slack_signing_secret: SecretStr | None = None
    slack_bot_token: SecretStr | None = None
    slack_api_base: str = "https://slack.com/api/"
    whatsapp_verify_token: SecretStr | None = None
    whatsapp_app_secret: SecretStr | None = None
    whatsapp_token: SecretStr | None = None
    whatsapp_phone_number_id: str | None = Field(default=None, pattern=r"^\d{1,32}$")
    whatsapp_api_base: str = "https://graph.facebook.com/v23.0"
    # name:language of an approved template with one body parameter, sent to reopen a closed
    # 24-hour window (docs/platforms.md); unset: deliveries outside the window are undeliverable
    whatsapp_template: str | None = Field(
        default=None, pattern=r"^[a-z0-9_]{1,512}:[A-Za-z]{2,3}(_[A-Za-z]{2,4})?$"
    )
    discord_public_key: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{64}$")
    discord_bot_token: SecretStr | None = None
    discord_application_id: str | None = Field(default=None, pattern=r"^\d{1,32}$")
    discord_api_base: str = "https://discord.com/api/v10"
    # Microsoft Teams (Bot Framework): the bot's app id and client secret (docs/platforms.md)
    teams_app_id: str | None = Field(default=None, pattern=r"^[0-9A-Za-z-]{1,64}$")
    teams_app_password: SecretStr | None = None
    teams_openid_url: str = "https://login.botframework.com/v1/.well-known/openidconfiguration"
    teams_token_url: str = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"
    teams_service_url: str = "https://smba.trafficmanager.net/teams/"  # scheduled results
    # Google Chat (HTTP endpoint app): the audience its tokens carry, the project number or the
    # app's URL (docs/platforms.md), and the service account's JSON key for replies
    googlechat_audience: str | None = Field(default=None, pattern=r"^(\d{1,20}|https://\S+)$")
    googlechat_service_account: SecretStr | None = None
    googlechat_certs_url: str | None = None  # default: Google's, for the audience's kind
    googlechat_api_base: str = "https://chat.googleapis.com/v1"
    line_channel_secret: SecretStr | None = None
    line_channel_access_token: SecretStr | None = None
    line_api_base: str = "https://api.line.me"
    line_data_api_base: str = "https://api-data.line.me"
    twilio_account_sid: str | None = Field(default=None, pattern=r"^AC[0-9a-fA-F]{32}$")
    twilio_auth_token: SecretStr | None = None
    twilio_from_number: str | None = Field(default=None, pattern=r"^\+[1-9]\d{4,14}$")
    twilio_api_base: str = "https://api.twilio.com"
    sms_max_segments: int = Field(default=10, ge=1, le=100)  # per answer, then it is cut
    matrix_homeserver_url: str | None = None
    matrix_hs_token: SecretStr | None = None  # the homeserver → Iris token (registration)
    matrix_as_token: SecretStr | None = None  # the Iris → homeserver token (registration)
    matrix_user_id: str | None = Field(default=None, pattern=r"^@[a-z0-9._=/+-]+:[A-Za-z0-9.:-]+$")
    matrix_display_name: str | None = Field(default=None, max_length=64)  # a group mention
    email_inbound_secret: SecretStr | None = None
    email_mailgun_signing_key: SecretStr | None = None
    email_smtp_url: SecretStr | None = None  # smtp://user:pass@host:587 or smtps://…:465
    email_from: str | None = Field(default=None, pattern=r"^[^@\s<>]+@[^@\s<>]+$")
    email_attachment_days: float = Field(default=30.0, gt=0, le=3650)  # then the sweep deletes
    # the authserv-id of the service that receives Iris' mail: only its Authentication-Results
    # count; unset: only the topmost one does (docs/platforms.md)
    email_authserv_id: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$"
    )
    group_reply_mode: Literal["mention", "all"] = "mention"
    transcription_model: str | None = None
    transcription_api_base: str | None = None
    transcription_api_key: SecretStr | None = None
    voice_replies: bool = False  # spoken answers to voice notes; each person's /voice overrides
    tts_model: str | None = None  # e.g. openai/tts-1; without it there are no voice replies
    tts_voice: str = "alloy"
    tts_api_base: str | None = None
    tts_api_key: SecretStr | None = None
    clarify_hours: float = Field(default=24.0, gt=0)  # a clarify question stays answerable

    mcp_servers: dict[str, Any] = Field(default_factory=dict)

    # The web tools (docs/acting.md): web_search is offered only with a provider
    web_search_provider: Literal["searxng", "brave", "tavily"] | None = None
    web_search_url: str | None = None  # SearXNG's base URL; overrides Brave's or Tavily's
    web_search_api_key: SecretStr | None = None
    web_search_results: int = Field(default=5, ge=1, le=20)
    web_allow_hosts: list[str] = Field(default_factory=list)  # host[:port] exempt from the
    # private-address block (intranets, tests)
    web_max_bytes: int = Field(default=5_000_000, ge=10_000)  # per fetched URL
    web_timeout: float = Field(default=20.0, gt=0, le=300)  # per fetched URL, redirects included
    web_extract_chars: int = Field(default=15_000, ge=500)  # readable text kept per URL
    # The browser tools (docs/acting.md): Chromium in the user's sandbox
    browser_chromium: str = "chromium"  # the executable's name or path inside the sandbox
    browser_action_timeout: float = Field(default=30.0, gt=0, le=300)  # per browser action
    browser_heap_mb: int = Field(default=512, ge=64, le=8_192)  # the page's JavaScript heap
    # All of Chromium's processes together (PSS), which the heap cap does not bound (a page's
    # ArrayBuffers, images, canvases): past it the driver kills the browser
    browser_memory_mb: int = Field(default=1_536, ge=256, le=32_768)
    browser_snapshot_chars: int = Field(default=6_000, ge=500)  # one window of a snapshot
    browser_pages_per_turn: int = Field(default=20, ge=1, le=500)  # browser actions per turn
    # One Chromium serves a turn's actions (the page stays open between them); it ends with
    # the turn, after this long without an action, or after browser_warm_seconds in all
    browser_idle_seconds: float = Field(default=120.0, gt=0, le=3_600)
    browser_warm_seconds: float = Field(default=900.0, gt=0, le=86_400)
    browser_download_max_bytes: int = Field(default=25_000_000, ge=1024)  # one download
    browser_downloads_max: int = Field(default=50, ge=1, le=10_000)  # files kept in downloads/
    # A hosted browser's DevTools endpoint (ws://, wss:// or http:// of --remote-debugging-port),
    # used instead of Chromium in the sandbox; it may carry a key, so it is a secret.
    browser_cdp_url: SecretStr | None = None
    # Parsers of strangers' documents (docs/security.md): one child process per document
    parse_cpu_seconds: int = Field(default=20, ge=1, le=600)  # CPU time per document
    parse_wall_seconds: float = Field(default=30.0, gt=0, le=900)  # wall time per document
    parse_memory_mb: int = Field(default=768, ge=128, le=16_384)  # address space per child
    parse_output_chars: int = Field(default=2_000_000, ge=1_000)  # text kept per document
    parse_concurrency: int = Field(default=2, ge=1, le=64)  # children at once (one per user)
    # execute_code (docs/acting.md): a Python script in the sandbox that calls tools
    execute_code_timeout: float = Field(default=300.0, ge=1, le=3600)  # wall seconds per script
    execute_code_max_calls: int = Field(default=50, ge=1, le=1000)  # tool calls per script
    execute_code_output_chars: int = Field(default=20_000, ge=500)  # printed text kept

    # Images in (docs/acting.md): None asks litellm whether the model sees images
    model_vision: bool | None = None
    vision_model: str | None = None  # answers vision_analyze for a model that cannot see
    image_max_bytes: int = Field(default=10 * 1024 * 1024, ge=1024, le=50 * 1024 * 1024)
    images_in_prompt: int = Field(default=4, ge=0, le=50)  # newest images shown to the model

    @field_validator("model_vision", mode="before")
    @classmethod
    def _vision(cls, value: Any) -> Any:
        return None if isinstance(value, str) and value.strip().lower() in ("", "auto") else value

    @field_validator("model", "cheap_model", "transcription_model", "vision_model", "tts_model")
    @classmethod
    def _model_string(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if any(ch.isspace() for ch in value):
            raise ValueError("a litellm model string has no spaces, e.g. 'openai/gpt-4o-mini'")
        return value

    @field_validator(
        "model_api_base",
        "public_url",
        "s3_endpoint_url",
        "telegram_api_base",
        "slack_api_base",
        "transcription_api_base",
        "tts_api_base",
        "web_search_url",
        "whatsapp_api_base",
        "discord_api_base",
        "teams_openid_url",
        "teams_token_url",
        "teams_service_url",
        "googlechat_certs_url",
        "googlechat_api_base",
        "line_api_base",
        "line_data_api_base",
        "twilio_api_base",
        "matrix_homeserver_url",
    )
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http:// or https:// URL (got {value!r})")
        return value

    @field_validator("db_url")
    @classmethod
    def _db_url(cls, value: str) -> str:
        if not value.startswith(DB_SCHEMES):
            raise ValueError(
                f"must start with file:, libsql:// or https:// (got {value!r}); "
                "e.g. file:/var/iris/iris.db or libsql://NAME-ORG.turso.io"
            )
        return value

    @field_validator("objects_url")
    @classmethod
    def _objects_url(cls, value: str) -> str:
        if value.startswith("s3://"):
            if not value[5:].split("/", 1)[0]:
                raise ValueError("an s3:// URL needs a bucket, e.g. s3://my-bucket/iris")
            return value
        if "://" in value and not value.startswith("file://"):
            raise ValueError(f"must be a local directory or s3://bucket/prefix (got {value!r})")
        return value

    @field_validator("allowed_models")
    @classmethod
    def _model_list(cls, value: list[str]) -> list[str]:
        for index, name in enumerate(value):
            if not name or any(ch.isspace() for ch in name) or "/" not in name:
                raise ValueError(
                    f"item {index} ({name!r}) is not a provider/model string, "
                    "e.g. 'openai/gpt-4o-mini'"
                )
        return value

    @field_validator(
        "telegram_allow",
        "slack_allow",
        "whatsapp_allow",
        "discord_allow",
        "teams_allow",
        "googlechat_allow",
        "email_allow",
        "owner_accounts",
        "allowed_models",
        "web_allow_hosts",
        "line_allow",
        "sms_allow",
        "matrix_allow",
        mode="before",
    )
    @classmethod
    def _account_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value.strip().startswith("["):
                try:
                    return json.loads(value)
                except json.JSONDecodeError:
                    raise ValueError("must be a JSON list or comma-separated values") from None
            return [part for part in re.split(r"[,\s]+", value) if part]
        return value

    @field_validator("web_search_provider", mode="before")
    @classmethod
    def _provider(cls, value: Any) -> Any:
        return None if value == "" else value.lower() if isinstance(value, str) else value

    @field_validator("web_allow_hosts")
    @classmethod
    def _allow_hosts(cls, value: list[str]) -> list[str]:
        from core.addresses import parse_allow_entry

        return [parse_allow_entry(entry) for entry in value]

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown IANA timezone {value!r}, e.g. 'Europe/Berlin'") from None
        return value

    @field_validator("mcp_servers")
    @classmethod
    def _mcp_servers(cls, value: dict[str, Any]) -> dict[str, Any]:
        from core.config.mcp import parse_mcp_servers

        parse_mcp_servers(value)
        return value

    @field_validator("dangerous_command_patterns")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for index, pattern in enumerate(value):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"item {index} ({pattern!r}) is not a regex: {exc}") from None
        return value

    @field_validator("daytona_api_url")
    @classmethod
    def _daytona_url(cls, value: str | None) -> str | None:
        return cls._http_url(value)

    @property
    def db_is_remote(self) -> bool:
        return not self.db_url.startswith("file:")

    def secret(self, name: str) -> str | None:
        value = getattr(self, name)
        return value.get_secret_value() if isinstance(value, SecretStr) else value

    def masked(self) -> dict[str, Any]:
        """Every setting with secrets masked: what ``iris config show`` prints."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                raw = value.get_secret_value()
                value = f"{raw[:3]}…{raw[-2:]} (set)" if len(raw) > 8 else "*** (set)"
            elif isinstance(value, Path):
                value = str(value)
            elif name == "mcp_servers":
                value = _mask_mcp_servers(value)
            out[name] = value
        return out


def _mask_mcp_servers(servers: dict[str, Any]) -> dict[str, Any]:
    """MCP ``headers`` and ``env`` values carry tokens: show their names only."""
    masked: dict[str, Any] = {}
    for name, server in servers.items():
        if isinstance(server, dict):
            server = {
                key: {k: "*** (set)" for k in value}
                if key in ("headers", "env") and isinstance(value, dict)
                else value
                for key, value in server.items()
            }
        masked[name] = server
    return masked
