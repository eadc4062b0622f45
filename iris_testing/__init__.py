"""Fakes and harnesses shared by the tests and the benchmarks (a development package: it is not
installed with Iris).

- ``scripted_model``: an in-process ``Model`` that answers from a script.
- ``llm_server``: ``ScriptedLLM``, an OpenAI-compatible HTTP server driven through litellm.
- ``telegram_api``, ``slack_api``: fake Bot API and Web API servers in the platforms' real shapes.
- ``server``: ``serve(app)`` / ``start_server(app)`` run any ASGI app on a loopback port.
- ``platform_stack``, ``webhook_load``, ``crash_platform_worker``: the Telegram + Slack stack
  (Iris, both fakes, a scripted model), its load generator and its crash-at-each-step worker.
"""
