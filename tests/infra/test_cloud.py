import pytest

from core.config import load_settings
from core.errors import ConfigError
from infra.cloud import check_container, cloud_problems, require_cloud_settings

CLOUD = {
    "IRIS_MODEL": "anthropic/claude-sonnet-4-5",
    "IRIS_DB_URL": "libsql://iris-me.turso.io",
    "IRIS_DB_AUTH_TOKEN": "tok",
    "IRIS_OBJECTS_URL": "s3://bucket/iris",
    "IRIS_SANDBOX_BACKEND": "modal",
}


def settings_with(iris_home, **changes):
    env = {"IRIS_HOME": str(iris_home), **CLOUD, **changes}
    return load_settings({k: v for k, v in env.items() if v is not None})


def test_a_complete_cloud_configuration_passes(iris_home):
    settings = settings_with(iris_home)
    assert cloud_problems(settings) == []
    assert require_cloud_settings(settings) is settings


@pytest.mark.parametrize(("change", "setting", "hint"), [
    ({"IRIS_DB_URL": None, "IRIS_DB_AUTH_TOKEN": None}, "db_url", "libsql://"),
    ({"IRIS_DB_AUTH_TOKEN": None}, "db_auth_token", "turso db tokens create"),
    ({"IRIS_OBJECTS_URL": None}, "objects_url", "s3://"),
    ({"IRIS_MODEL": None}, "model", "openai/gpt-4o-mini"),
    ({"IRIS_SANDBOX_BACKEND": "local"}, "sandbox_backend", "modal"),
])
def test_each_local_only_setting_is_named_with_its_fix(iris_home, change, setting, hint):
    problem, = cloud_problems(settings_with(iris_home, **change))
    assert problem.setting == setting
    assert hint in problem.fix


def test_a_container_refuses_to_start_and_says_why(iris_home, monkeypatch):
    monkeypatch.setenv("IRIS_MODEL", "openai/x")
    with pytest.raises(ConfigError) as caught:
        check_container(in_cloud=True)
    message = str(caught.value)
    for name in ("db_url", "objects_url", "sandbox_backend"):
        assert name in message
    check_container(in_cloud=False)
