"""Fixtures the tests of this folder share."""

import pytest


@pytest.fixture
def scripted_llm():
    """The scripted OpenAI-compatible server and a litellm model pointed at it."""
    from core.model.llm import LiteLLMModel
    from iris_testing.llm_server import ScriptedLLM
    from iris_testing.server import serve

    llm = ScriptedLLM()
    with serve(llm.app) as server:
        yield llm, LiteLLMModel("openai/scripted-model", api_base=f"{server.url}/v1",
                                api_key="sk-test")
