import re
import shutil

import pytest
from click.testing import CliRunner

from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from local_dev.cli import cli
from local_dev.doctor import run_checks


def doctor(*args):
    return CliRunner().invoke(cli, ["doctor", *args])


def problems(output):
    """{check: message + fix} of every ✗ line."""
    found, last = {}, None
    for line in output.splitlines():
        if line.startswith("✗ "):
            check, message = re.match(r"✗ (.+?)\s{2,}(.*)$", line).groups()
            found[check] = message
            last = check
        elif line.strip().startswith("fix:") and last:
            found[last] += " | " + line.strip()
        elif not line.startswith(" "):
            last = None
    return found


def test_a_fresh_home_has_warnings_only(monkeypatch):
    monkeypatch.delenv("IRIS_SANDBOX_ISOLATION")  # the default: isolated when bwrap is here
    result = doctor()
    assert result.exit_code == 0, result.output
    assert "! model  " in result.output and "! api key  " in result.output
    if shutil.which("bwrap"):
        assert "✓ sandbox         local, isolated" in result.output
        assert "0 error(s), 2 warning(s)." in result.output
    else:  # the sandbox and execute_code both say so
        assert "! sandbox         local, not isolated" in result.output
        assert "0 error(s), 4 warning(s)." in result.output


def test_unisolated_commands_are_named_and_an_open_home_is_flagged(iris_home, monkeypatch):
    monkeypatch.setenv("IRIS_SANDBOX_ISOLATION", "none")
    iris_home.chmod(0o755)
    result = doctor()
    assert "local, NOT isolated (sandbox_isolation: none)" in result.output
    assert f"fix: chmod 700 {iris_home}" in result.output


def test_a_broken_configuration_names_each_problem(iris_home, moto_s3, s3_bucket, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (iris_home / "iris.yaml").write_text(
        "model: anthropic/claude-sonnet-4-5\n"
        f"objects_url: s3://{s3_bucket}-missing/iris\n"
        f"s3_endpoint_url: {moto_s3.endpoint_url}\n"
        "sandbox_backend: daytona\n"
    )
    (iris_home / ".env").write_text(
        "IRIS_TELEGRAM_TOKEN=123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi\n"
        "IRIS_SLACK_SIGNING_SECRET=signing\n"
        "IRIS_API_KEY=k\n"
    )
    (iris_home / ".env").chmod(0o644)
    result = doctor()
    assert result.exit_code == 1
    found = problems(result.output)
    assert set(found) == {"object store", "model key", "telegram", "slack", "sandbox"}
    assert "s3://" in found["object store"] and "AWS_ACCESS_KEY_ID" in found["object store"]
    assert "ANTHROPIC_API_KEY" in found["model key"]
    assert "IRIS_TELEGRAM_TOKEN is set but IRIS_TELEGRAM_SECRET is not" in found["telegram"]
    assert "IRIS_SLACK_SIGNING_SECRET is set but IRIS_SLACK_BOT_TOKEN is not" in found["slack"]
    assert "IRIS_DAYTONA_API_KEY" in found["sandbox"]
    assert "! .env" in result.output and "chmod 600" in result.output
    assert "5 error(s)" in result.output


def test_a_value_that_does_not_load_is_one_clear_error(iris_home):
    (iris_home / "iris.yaml").write_text("max_iterations: lots\n")
    result = doctor()
    assert result.exit_code == 1
    assert problems(result.output) == {
        "config": f"{iris_home / 'iris.yaml'}: max_iterations: Input should be a valid integer, "
                  "unable to parse string as an integer | fix: fix that value in iris.yaml or "
                  ".env, or run `iris setup`"}


def test_a_bad_mcp_server_entry_is_named(iris_home):
    (iris_home / "iris.yaml").write_text("mcp_servers:\n  time:\n    args: [x]\n")
    result = doctor()
    assert result.exit_code == 1
    assert "mcp_servers" in result.output and "time" in result.output


def test_mismatched_platform_secrets_and_formats(iris_home):
    (iris_home / ".env").write_text(
        "IRIS_TELEGRAM_SECRET=has spaces and !\nIRIS_TELEGRAM_TOKEN=123:short\n"
        "IRIS_SLACK_BOT_TOKEN=xoxp-user-token\nIRIS_SLACK_SIGNING_SECRET=s\n"
    )
    report = run_checks()
    levels = {(f.check, f.level) for f in report.findings}
    assert ("telegram", "error") in levels and ("slack", "warning") in levels
    assert any("A-Z a-z 0-9 _ -" in f.message for f in report.errors)


def test_half_set_whatsapp_discord_and_email_are_named(iris_home):
    (iris_home / ".env").write_text(
        "IRIS_WHATSAPP_TOKEN=EAAG\nIRIS_DISCORD_PUBLIC_KEY=" + "ab" * 32 + "\n"
        "IRIS_DISCORD_APPLICATION_ID=1\nIRIS_DISCORD_BOT_TOKEN=b\n"
        "IRIS_EMAIL_INBOUND_SECRET=s\n"
    )
    found = {f.check: f for f in run_checks().findings}
    assert found["whatsapp"].level == "error"
    assert "IRIS_WHATSAPP_APP_SECRET" in found["whatsapp"].message
    assert found["discord"].level == "ok"
    assert found["email"].level == "error" and "IRIS_EMAIL_SMTP_URL" in found["email"].message


def test_half_set_teams_and_a_broken_google_chat_key_are_named(iris_home):
    (iris_home / ".env").write_text(
        "IRIS_TEAMS_APP_ID=3f2c1e8a-5b7d-4c9e-8a1f-0d6b2e4c7a91\n"
        "IRIS_GOOGLECHAT_AUDIENCE=123456789012\n"
        "IRIS_GOOGLECHAT_SERVICE_ACCOUNT={\"client_email\": \"a@b.iam\"}\n"
    )
    found = {f.check: f for f in run_checks().findings}
    assert found["teams"].level == "error"
    assert "IRIS_TEAMS_APP_PASSWORD" in found["teams"].message
    assert found["googlechat"].level == "ok"
    assert found["googlechat service account"].level == "error"
    assert "private_key" in found["googlechat service account"].message


def test_the_whatsapp_template_is_reported(iris_home):
    whatsapp = ("IRIS_WHATSAPP_TOKEN=EAAG\nIRIS_WHATSAPP_APP_SECRET=s\n"
                "IRIS_WHATSAPP_PHONE_NUMBER_ID=106540352242922\nIRIS_WHATSAPP_VERIFY_TOKEN=v\n")
    (iris_home / ".env").write_text(whatsapp)
    found = {f.check: f for f in run_checks().findings}
    assert "IRIS_WHATSAPP_TEMPLATE" in (found["whatsapp template"].fix or "")
    (iris_home / ".env").write_text(whatsapp + "IRIS_WHATSAPP_TEMPLATE=iris_update:en_US\n")
    found = {f.check: f for f in run_checks().findings}
    assert found["whatsapp template"].message.startswith("iris_update (en_US) reopens")


def test_online_check_reports_a_failing_model(iris_home, monkeypatch):
    llm = ScriptedLLM()
    llm.fail(401)
    with serve(llm.app) as server:
        monkeypatch.setenv("IRIS_MODEL", "openai/scripted-model")
        monkeypatch.setenv("IRIS_MODEL_API_BASE", f"{server.url}/v1")
        monkeypatch.setenv("IRIS_MODEL_API_KEY", "wrong")
        result = doctor("--online")
    assert result.exit_code == 1
    assert "✗ model call" in result.output and "failed" in result.output


@pytest.mark.parametrize("backend", ["local", "modal"])
def test_cloud_mode_demands_cloud_parts(iris_home, monkeypatch, backend):
    monkeypatch.setenv("IRIS_MODEL", "ollama/llama3")
    monkeypatch.setenv("IRIS_SANDBOX_BACKEND", backend)
    result = doctor("--cloud")
    assert result.exit_code == 1
    found = problems(result.output)
    assert {"cloud: db_url", "cloud: objects_url", "api key"} <= set(found)
    assert ("cloud: sandbox_backend" in found) == (backend == "local")


def test_web_search_says_how_to_enable_it(monkeypatch):
    result = doctor()
    line = next(x for x in result.output.splitlines() if "web search" in x)
    assert "off (web_search is not offered); to enable it, set IRIS_WEB_SEARCH_PROVIDER" in line
    monkeypatch.setenv("IRIS_WEB_SEARCH_PROVIDER", "tavily")
    assert "tavily needs IRIS_WEB_SEARCH_API_KEY" in problems_or_warnings(doctor().output)
    monkeypatch.setenv("IRIS_WEB_SEARCH_API_KEY", "tvly-abc")
    assert "✓ web search      web_search uses tavily" in doctor().output


def problems_or_warnings(output):
    return "\n".join(line for line in output.splitlines() if line.startswith(("✗", "!")))


def line_of(output, check):
    """The doctor line of ``check`` (its mark, name and message)."""
    (line,) = [x for x in output.splitlines() if re.match(rf"[✓!✗] {re.escape(check)}\s{{2,}}", x)]
    return line


def test_vision_says_how_images_are_seen(monkeypatch):
    monkeypatch.setenv("IRIS_MODEL", "ollama/llama3")  # litellm's model info: no images
    line = line_of(doctor().output, "vision")
    assert line.startswith("✓ vision          off: ollama/llama3 cannot see images (litellm's "
                           "model info) and IRIS_VISION_MODEL is not set")
    assert "to enable it, set IRIS_VISION_MODEL" in line
    monkeypatch.setenv("IRIS_VISION_MODEL", "openai/gpt-4o-mini")
    line = line_of(doctor().output, "vision")
    assert "ollama/llama3 cannot see images (litellm's model info); vision_analyze asks " \
           "openai/gpt-4o-mini (IRIS_VISION_MODEL)" in line
    monkeypatch.delenv("IRIS_VISION_MODEL")
    monkeypatch.setenv("IRIS_MODEL", "openai/gpt-4o")  # litellm's model info: sees
    assert line_of(doctor().output, "vision") == \
        "✓ vision          openai/gpt-4o sees images (litellm's model info)"
    monkeypatch.setenv("IRIS_MODEL_VISION", "false")  # the owner's word overrides litellm
    assert "openai/gpt-4o cannot see images (IRIS_MODEL_VISION=false)" in \
        line_of(doctor().output, "vision")


def test_voice_replies_say_whether_they_can_be_spoken(monkeypatch):
    assert line_of(doctor().output, "voice replies").startswith(
        "✓ voice replies   off (IRIS_TTS_MODEL is not set); to enable it, set IRIS_TTS_MODEL")
    monkeypatch.setenv("IRIS_VOICE_REPLIES", "true")
    result = doctor()
    assert line_of(result.output, "voice replies").startswith(
        "! voice replies   IRIS_VOICE_REPLIES is on but IRIS_TTS_MODEL is not set")
    assert "fix: set IRIS_TTS_MODEL (e.g. openai/tts-1)" in result.output
    monkeypatch.setenv("IRIS_TTS_MODEL", "openai/tts-1")
    assert line_of(doctor().output, "voice replies") == (
        "✓ voice replies   openai/tts-1 (voice alloy) speaks answers to Telegram voice notes; "
        "on by default (IRIS_VOICE_REPLIES), each person's /voice overrides")
    monkeypatch.setenv("IRIS_VOICE_REPLIES", "false")
    assert "; off by default (IRIS_VOICE_REPLIES)" in line_of(doctor().output, "voice replies")


def test_execute_code_names_its_sandbox_and_limits(monkeypatch, tmp_path):
    monkeypatch.delenv("IRIS_SANDBOX_ISOLATION", raising=False)
    monkeypatch.setenv("IRIS_EXECUTE_CODE_TIMEOUT", "90")
    monkeypatch.setenv("IRIS_EXECUTE_CODE_MAX_CALLS", "7")
    limits = ("limits 90 s, 7 tool calls, 20,000 printed chars per script "
              "(IRIS_EXECUTE_CODE_TIMEOUT / _MAX_CALLS / _OUTPUT_CHARS)")
    if shutil.which("bwrap"):
        assert line_of(doctor().output, "execute_code") == (
            f"✓ execute_code    runs in the local sandbox under bubblewrap; {limits}")
    monkeypatch.setenv("PATH", str(tmp_path))  # no bubblewrap to be found
    result = doctor()
    assert line_of(result.output, "execute_code") == (
        "! execute_code    runs in the local sandbox NOT isolated (bubblewrap is not "
        f"installed): a script can read everything this account can; {limits}")
    assert "fix: install bubblewrap" in result.output
    monkeypatch.setenv("IRIS_SANDBOX_BACKEND", "modal")
    assert line_of(doctor().output, "execute_code") == (
        f"✓ execute_code    runs in the modal sandbox; {limits}")


def test_online_reads_telegrams_webhook_and_warns_of_missing_update_types(monkeypatch):
    import httpx

    from iris_testing.telegram_api import FakeTelegram

    token = "123456:" + "A" * 35
    fake = FakeTelegram(token=token)
    with serve(fake.app) as api:
        monkeypatch.setenv("IRIS_TELEGRAM_TOKEN", token)
        monkeypatch.setenv("IRIS_TELEGRAM_SECRET", "s3cret-webhook")
        monkeypatch.setenv("IRIS_TELEGRAM_API_BASE", api.url)
        assert "no webhook set" in doctor("--online").output
        httpx.post(f"{api.url}/bot{token}/setWebhook", json={
            "url": "https://iris.example/telegram/webhook", "allowed_updates": ["message"]})
        result = doctor("--online")
        assert "! telegram webhook  the webhook is registered without callback_query" in (
            result.output)
        assert "fix: iris telegram set-webhook URL" in result.output
        asked = fake.methods_called().count("getWebhookInfo")
        offline = doctor()
        assert fake.methods_called().count("getWebhookInfo") == asked == 2  # --online only
        assert "telegram webhook" not in offline.output
        assert CliRunner().invoke(cli, ["telegram", "set-webhook", "https://iris.example"]
                                  ).exit_code == 0
        fixed = doctor("--online")
        assert "✓ telegram webhook  https://iris.example/telegram/webhook (message, " \
               "callback_query)" in fixed.output


def test_half_set_line_is_named(iris_home):
    (iris_home / ".env").write_text("IRIS_LINE_CHANNEL_SECRET=s\n")
    found = {f.check: f for f in run_checks().findings}
    assert found["line"].level == "error"
    assert "IRIS_LINE_CHANNEL_ACCESS_TOKEN" in found["line"].message
    (iris_home / ".env").write_text("IRIS_LINE_CHANNEL_SECRET=s\n"
                                    "IRIS_LINE_CHANNEL_ACCESS_TOKEN=t\n")
    assert {f.check: f for f in run_checks().findings}["line"].level == "ok"


def test_sms_without_the_public_url_is_named(iris_home):
    (iris_home / ".env").write_text(
        "IRIS_TWILIO_ACCOUNT_SID=AC" + "0" * 32 + "\nIRIS_TWILIO_AUTH_TOKEN=t\n"
        "IRIS_TWILIO_FROM_NUMBER=+15005550006\n")
    found = {f.check: f for f in run_checks().findings}
    assert found["sms"].level == "error" and "IRIS_PUBLIC_URL" in found["sms"].message
    (iris_home / ".env").write_text(
        "IRIS_TWILIO_ACCOUNT_SID=AC" + "0" * 32 + "\nIRIS_TWILIO_AUTH_TOKEN=t\n"
        "IRIS_TWILIO_FROM_NUMBER=+15005550006\nIRIS_PUBLIC_URL=https://iris.example.net\n")
    assert {f.check: f for f in run_checks().findings}["sms"].level == "ok"


def test_half_set_matrix_is_named(iris_home):
    (iris_home / ".env").write_text("IRIS_MATRIX_HS_TOKEN=hs\nIRIS_MATRIX_AS_TOKEN=as\n")
    found = {f.check: f for f in run_checks().findings}
    assert found["matrix"].level == "error"
    assert "IRIS_MATRIX_HOMESERVER_URL" in found["matrix"].message
