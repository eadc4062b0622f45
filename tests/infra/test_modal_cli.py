import inspect

import modal
import pytest

from infra.deploy import sdk_secret_probe
from infra.modal_cli import modal_token, web_url


def test_token_from_the_environment():
    assert modal_token({"MODAL_TOKEN_ID": "ak", "MODAL_TOKEN_SECRET": "as"}, None)
    assert modal_token({"MODAL_TOKEN_ID": "ak", "HOME": "/nonexistent"}) is None


@pytest.mark.parametrize(("toml", "env", "found"), [
    ('[me]\ntoken_id = "ak"\ntoken_secret = "as"\n', {}, "profile me"),
    ('[a]\ntoken_id = "1"\ntoken_secret = "2"\n[b]\ntoken_id = "3"\ntoken_secret = "4"\n'
     'active = true\n', {}, "profile b"),
    ('[a]\ntoken_id = "1"\ntoken_secret = "2"\n[b]\ntoken_id = "3"\ntoken_secret = "4"\n', {},
     None),
    ('[a]\ntoken_id = "1"\ntoken_secret = "2"\n', {"MODAL_PROFILE": "b"}, None),
    ('[a]\ntoken_id = "1"\n', {}, None),
    ("not toml [", {}, None),
])
def test_token_from_modal_toml(tmp_path, toml, env, found):
    (tmp_path / ".modal.toml").write_text(toml)
    result = modal_token({"HOME": str(tmp_path), **env})
    assert (result is None) if found is None else result.startswith(found)


def test_web_url_is_found_in_deploy_output():
    output = ("✓ Created objects.\n└── 🔨 Created function Web.*.\n"
              "    └── app -> https://acme-dev--iris-web-app.modal.run 🔑\n"
              "View Deployment: https://modal.com/apps/acme/main/deployed/iris\n")
    assert web_url(output) == "https://acme-dev--iris-web-app.modal.run"
    assert web_url("View Deployment: https://modal.com/apps/x") is None


class FakeSecrets:
    """``modal.Secret.from_name(...).hydrate()`` for a secret holding ``keys`` (None: absent)."""

    exception = modal.exception

    def __init__(self, keys, fail=None):
        self.held = keys
        self.fail = fail
        self.calls = []
        self.Secret = self

    def from_name(self, name, *, environment_name=None, required_keys=(), client=None):
        self.calls.append(((name,), {"required_keys": list(required_keys)}))
        if self.fail is not None:
            raise self.fail
        return _Handle(self.held, list(required_keys))


class _Handle:
    def __init__(self, held, required):
        self.held, self.required = held, required

    def hydrate(self, client=None):
        if self.held is None or set(self.required) - set(self.held):
            raise modal.exception.NotFoundError("Secret not found or missing keys")
        return self


def test_secret_probe_names_the_missing_keys():
    sdk = FakeSecrets(["IRIS_MODEL", "IRIS_DB_URL"])
    state = sdk_secret_probe("iris", ["IRIS_MODEL", "IRIS_DB_URL", "IRIS_OBJECTS_URL"], sdk)
    assert state.exists and state.missing_keys == ("IRIS_OBJECTS_URL",)
    for args, kwargs in sdk.calls:
        inspect.signature(modal.Secret.from_name).bind(*args, **kwargs)
    assert sdk_secret_probe("iris", ["IRIS_MODEL"], FakeSecrets(None)).exists is False
    complete = sdk_secret_probe("iris", ["IRIS_MODEL"], FakeSecrets(["IRIS_MODEL"]))
    assert complete.exists and complete.missing_keys == ()


def test_secret_probe_reports_what_stopped_it():
    errors = modal.exception
    denied = sdk_secret_probe("iris", ["IRIS_MODEL"],
                              FakeSecrets(None, fail=errors.AuthError("token invalid")))
    assert denied.error.startswith("Modal rejected the token")
    offline = sdk_secret_probe("iris", [],
                               FakeSecrets(None, fail=errors.ConnectionError("no route")))
    assert offline.error == "could not ask Modal (ConnectionError: no route)"
