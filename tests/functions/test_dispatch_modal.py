import asyncio
import inspect
import logging

import modal
import pytest

from core.contracts.dispatch import ChatRef
from functions.dispatch_modal import ModalDispatcher
from functions.runtime import dispatcher_for
from tests.infra.fakes import FakeModal

CHAT = ChatRef("usr_1", "telegram:42")


def test_drain_spawns_the_deployed_worker(runtime):
    sdk = FakeModal()
    dispatcher = ModalDispatcher(runtime.settings.modal_app, sdk=sdk)
    asyncio.run(dispatcher.drain(CHAT))
    asyncio.run(dispatcher.drain(ChatRef("usr_2", "slack:T1/C1")))
    assert [c.name for c in sdk.calls] == ["Cls.from_name", "drain.spawn.aio", "drain.spawn.aio"]
    assert sdk.calls[0].args == ("iris", "Worker")
    assert sdk.spawned() == [("usr_1", "telegram:42"), ("usr_2", "slack:T1/C1")]


def test_the_app_name_follows_the_setting(settings):
    configured = settings.model_copy(update={"modal_app": "iris-staging", "dispatcher": "modal"})
    dispatcher = dispatcher_for(configured)
    assert isinstance(dispatcher, ModalDispatcher)
    dispatcher.sdk = sdk = FakeModal()
    asyncio.run(dispatcher.drain(CHAT))
    assert sdk.calls[0].args == ("iris-staging", "Worker")


def test_transient_failures_are_retried_with_a_fresh_lookup():
    sdk = FakeModal()
    sdk.fail_next(modal.exception.ConnectionError("reset"), OSError("unreachable"))
    dispatcher = ModalDispatcher("iris", sdk=sdk, backoff=0)
    asyncio.run(dispatcher.drain(CHAT))
    assert sdk.spawned() == [("usr_1", "telegram:42")] * 3
    assert [c.name for c in sdk.calls].count("Cls.from_name") == 3


def test_persistent_failure_is_logged_not_raised(caplog):
    sdk = FakeModal()
    sdk.fail_next(*[modal.exception.InternalError("down")] * 3)
    dispatcher = ModalDispatcher("iris", sdk=sdk, backoff=0, attempts=3)
    with caplog.at_level(logging.ERROR, logger="iris.dispatch"):
        asyncio.run(dispatcher.drain(CHAT))
    assert len(sdk.spawned()) == 3
    assert "sweeper will resume it" in caplog.text


def test_an_undeployed_app_is_named_in_the_log(caplog):
    sdk = FakeModal()
    sdk.fail_next(modal.exception.NotFoundError("App 'iris' not found"))
    with caplog.at_level(logging.ERROR, logger="iris.dispatch"):
        asyncio.run(ModalDispatcher("iris", sdk=sdk).drain(CHAT))
    assert len(sdk.spawned()) == 1
    assert "is it deployed?" in caplog.text and "iris deploy" in caplog.text


def test_a_bug_is_not_swallowed():
    sdk = FakeModal()
    sdk.fail_next(TypeError("wrong arguments"))
    with pytest.raises(TypeError):
        asyncio.run(ModalDispatcher("iris", sdk=sdk).drain(CHAT))


def test_fake_calls_fit_the_real_sdk():
    sdk = FakeModal()
    sdk.Cls.from_name("iris", "Worker", environment_name="main")
    call = sdk.calls[0]
    inspect.signature(modal.Cls.from_name).bind(*call.args, **call.kwargs)
    assert callable(modal.Cls.from_name("iris", "Worker")().drain.spawn.aio)


def test_the_composition_root_picks_it_for_the_modal_setting(settings):
    from functions.dispatch import LocalDispatcher

    assert isinstance(dispatcher_for(settings.model_copy(update={"dispatcher": "modal"})),
                      ModalDispatcher)
    assert isinstance(dispatcher_for(settings), LocalDispatcher)


def test_importing_it_does_not_import_modal():
    import subprocess
    import sys

    code = "import sys, functions.dispatch_modal; print('modal' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
