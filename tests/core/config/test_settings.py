import pytest

from core.config import load_settings
from core.errors import ConfigError


def test_defaults_live_under_iris_home(iris_home):
    settings = load_settings()
    assert settings.home == iris_home
    assert settings.db_url == f"file:{iris_home / 'iris.db'}"
    assert settings.objects_url == str(iris_home / "objects")
    assert settings.model is None


def test_yaml_then_environment_precedence(iris_home, monkeypatch):
    (iris_home / "iris.yaml").write_text("model: openai/gpt-4o-mini\ntimezone: Europe/Berlin\n")
    monkeypatch.setenv("IRIS_MODEL", "anthropic/claude-sonnet-4-5")
    settings = load_settings()
    assert settings.model == "anthropic/claude-sonnet-4-5"
    assert settings.timezone == "Europe/Berlin"


def test_iris_config_points_at_another_file(tmp_path, monkeypatch):
    path = tmp_path / "elsewhere.yaml"
    path.write_text("max_iterations: 7\n")
    monkeypatch.setenv("IRIS_CONFIG", str(path))
    assert load_settings().max_iterations == 7


@pytest.mark.parametrize(
    ("env", "setting", "fragment"),
    [
        ({"IRIS_DB_URL": "postgres://db"}, "IRIS_DB_URL", "must start with file:"),
        ({"IRIS_OBJECTS_URL": "gs://bucket"}, "IRIS_OBJECTS_URL", "s3://bucket"),
        ({"IRIS_OBJECTS_URL": "s3://"}, "IRIS_OBJECTS_URL", "needs a bucket"),
        ({"IRIS_MODEL": "gpt 4"}, "IRIS_MODEL", "no spaces"),
        ({"IRIS_MODEL_API_BASE": "localhost:8000"}, "IRIS_MODEL_API_BASE", "http://"),
        ({"IRIS_TIMEZONE": "Mars/Olympus"}, "IRIS_TIMEZONE", "unknown IANA timezone"),
        ({"IRIS_MAX_ITERATIONS": "zero"}, "IRIS_MAX_ITERATIONS", "integer"),
        ({"IRIS_MAX_ITERATIONS": "0"}, "IRIS_MAX_ITERATIONS", "greater than or equal to 1"),
        ({"IRIS_MCP_SERVERS": "{not json"}, "IRIS_MCP_SERVERS", "must be JSON"),
        ({"IRIS_CONFIG": "/nonexistent/iris.yaml"}, "IRIS_CONFIG", "file not found"),
    ],
)
def test_bad_values_name_the_setting(monkeypatch, env, setting, fragment):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.setting == setting
    assert fragment in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_yaml_is_reported_with_its_line(iris_home):
    (iris_home / "iris.yaml").write_text("model: openai/x\n  bad: [indent\n")
    with pytest.raises(ConfigError, match=r"not valid YAML \(line \d+\)"):
        load_settings()


def test_unknown_yaml_key_suggests_the_right_one(iris_home):
    (iris_home / "iris.yaml").write_text("modle: openai/gpt-4o\n")
    with pytest.raises(ConfigError, match="did you mean 'model'"):
        load_settings()


def test_yaml_value_error_names_file_and_key(iris_home):
    (iris_home / "iris.yaml").write_text("db_url: mysql://x\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.setting.endswith("iris.yaml: db_url")


def test_masked_hides_secrets(monkeypatch):
    monkeypatch.setenv("IRIS_MODEL_API_KEY", "sk-supersecretvalue123")
    monkeypatch.setenv("IRIS_API_KEY", "short")
    masked = load_settings().masked()
    assert "supersecret" not in str(masked)
    assert masked["model_api_key"].endswith("(set)")
    assert masked["api_key"] == "*** (set)"
