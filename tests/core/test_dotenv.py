import os
import stat

import pytest

from core.config import load_settings
from core.dotenv import parse_dotenv, read_dotenv, update_dotenv
from core.errors import ConfigError


def test_parse_handles_quotes_comments_and_export():
    text = (
        "# a comment\n\n"
        "export A=plain\n"
        "B='single # not a comment'\n"
        'C="line\\nbreak \\"quoted\\""\n'
        "D=value # trailing comment\n"
        "E=\n"
    )
    assert parse_dotenv(text) == {
        "A": "plain", "B": "single # not a comment", "C": 'line\nbreak "quoted"',
        "D": "value", "E": "",
    }


@pytest.mark.parametrize("line", ["no equals sign", "1BAD=x", 'Q="unterminated'])
def test_malformed_line_names_its_number(line):
    with pytest.raises(ConfigError, match="line 2"):
        parse_dotenv(f"OK=1\n{line}\n", "x/.env")


def test_update_keeps_other_lines_and_is_private(tmp_path):
    path = tmp_path / ".env"
    path.write_text("# keep me\nA=1\nB=old\n")
    assert update_dotenv(path, {"B": "new value", "C": "x$y"}) is True
    text = path.read_text()
    assert text.startswith("# keep me\nA=1\n")
    assert read_dotenv(path) == {"A": "1", "B": "new value", "C": "x$y"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert update_dotenv(path, {"A": "1"}) is False


def test_update_refuses_a_file_it_cannot_parse(tmp_path):
    path = tmp_path / ".env"
    path.write_text("garbage line\n")
    with pytest.raises(ConfigError):
        update_dotenv(path, {"A": "1"})
    assert path.read_text() == "garbage line\n"


def test_load_settings_reads_dotenv_and_real_env_wins(iris_home, monkeypatch):
    (iris_home / "iris.yaml").write_text("model: openai/from-yaml\ntimezone: Europe/Berlin\n")
    (iris_home / ".env").write_text(
        "IRIS_MODEL=openai/from-dotenv\nIRIS_MODEL_API_KEY=sk-dotenv\nIRIS_TIMEZONE=Asia/Tokyo\n"
        "IRIS_TEST_DOTENV_EXPORT=no\nAWS_IRIS_TEST_KEY=from-dotenv\n"
    )
    monkeypatch.setenv("IRIS_TIMEZONE", "UTC")
    monkeypatch.setenv("AWS_IRIS_TEST_KEY", "placeholder")
    monkeypatch.delenv("AWS_IRIS_TEST_KEY")
    settings = load_settings()
    assert settings.model == "openai/from-dotenv"
    assert settings.secret("model_api_key") == "sk-dotenv"
    assert settings.timezone == "UTC"
    assert os.environ["AWS_IRIS_TEST_KEY"] == "from-dotenv"
    assert "IRIS_TEST_DOTENV_EXPORT" not in os.environ


def test_an_explicit_env_mapping_leaves_os_environ_alone(iris_home, monkeypatch):
    (iris_home / ".env").write_text("AWS_IRIS_TEST_OTHER=1\n")
    monkeypatch.delenv("AWS_IRIS_TEST_OTHER", raising=False)
    load_settings({"IRIS_HOME": str(iris_home)})
    assert "AWS_IRIS_TEST_OTHER" not in os.environ


def test_a_bad_dotenv_value_names_the_file(iris_home):
    (iris_home / ".env").write_text("IRIS_DB_URL=mysql://nope\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert ".env: IRIS_DB_URL" in str(caught.value)
