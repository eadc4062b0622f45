"""Run in a fresh interpreter by test_ack_path.py: acknowledge a Microsoft Teams activity and a
Google Chat event with the web app built the way a container does, and print (JSON on stdout)
the heavy modules the acks imported beyond what the process already held (the test client, the
fake key servers). The first ack of each fetches the platform's signing keys over HTTP; the turn
machinery, the model, MCP and the cloud SDKs must stay out. The dispatcher only records."""

from __future__ import annotations

import json
import sys

from tests.functions.ack_probe import HEAVY, Recording


def main(home: str) -> None:
    from starlette.testclient import TestClient

    from core.config import load_settings
    from functions.app import create_app
    from functions.runtime import compose
    from iris_testing.googlechat_api import FakeGoogleChat
    from iris_testing.server import serve
    from iris_testing.teams_api import FakeTeams

    teams, chat = FakeTeams(), FakeGoogleChat()
    with serve(teams.app) as teams_server, serve(chat.app) as chat_server:
        teams.url, chat.url = teams_server.url, chat_server.url
        settings = load_settings({"IRIS_HOME": home, "IRIS_API_KEY": "k",
                                  **teams.env(), **chat.env()})
        recording = Recording()
        rt = compose(settings, dispatcher=recording)
        with TestClient(create_app(rt)) as client:
            before = {name for name in HEAVY if name in sys.modules}
            statuses = [
                client.post("/teams/messages", content=json.dumps(teams.activity("hello")),
                            headers=teams.headers()).status_code,
                client.post("/googlechat/events", content=json.dumps(chat.event("hello")),
                            headers=chat.headers()).status_code,
            ]
            after = [name for name in HEAVY if name in sys.modules and name not in before]
    print(json.dumps({"statuses": statuses, "imported": after,
                      "drained": len(recording.chats)}))


if __name__ == "__main__":
    main(sys.argv[1])
