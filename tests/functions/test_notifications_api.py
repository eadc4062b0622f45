"""The notifications webhook is a URL the user chooses, so it is held to web_extract's address
rules: refused at registration (PUT /v1/notifications/webhook) when it reaches this host, a
private network or a metadata service, and checked again at every push (DNS may have changed),
connected to the address checked, without proxies or redirects; a failed push reads the same
whatever happened at the other end."""

import asyncio
import ipaddress
import socket

import httpx
import pytest
from pydantic import SecretStr

from core.clock import ManualClock
from core.errors import NotFound
from core.platforms import inbox
from functions.app import create_app
from functions.dispatch import LocalDispatcher
from functions.runtime import compose
from iris_testing.scripted_model import FixedRouter
from iris_testing.server import free_port, serve
from tests.clocks import NOW
from tests.functions.test_inbox_delivery import KEY, make_job_over_http, run_job

PUBLIC = "93.184.215.14"  # a global address: allowed, never connected to by these tests


class Dns:
    """A resolver as ``core.web.fetch.system_resolver`` behaves: the addresses a name has, or
    the ``socket.gaierror`` getaddrinfo raises for a name that has none."""

    def __init__(self, **names: str):
        self.names = dict(names)
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int):
        self.asked.append(host)
        if host not in self.names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [ipaddress.ip_address(self.names[host])]


class Recorder:
    """Any request to any path is recorded (method, path, Host); answers with the queued
    ``(status, headers)``, then 200."""

    def __init__(self, answers=()):
        self.answers = list(answers)
        self.hits: list[tuple[str, str, str]] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])
        self.hits.append((scope["method"], scope["path"], headers.get(b"host", b"").decode()))
        while (await receive()).get("more_body"):
            pass
        status, extra = self.answers.pop(0) if self.answers else (200, {})
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k.encode(), v.encode()) for k, v in extra.items()]})
        await send({"type": "http.response.body", "body": b"{}"})


@pytest.fixture
def clock():
    return ManualClock(NOW)


@pytest.fixture
def dns():
    return Dns(**{"hooks.example.test": PUBLIC, "intranet.example.test": "10.1.2.3"})


@pytest.fixture
def make_api(settings, store, scripted, dns):
    """``make_api(**settings)``: the HTTP API of a runtime whose DNS is ``dns``."""
    opened = []

    def make(**update):
        configured = settings.model_copy(update={"api_key": SecretStr("test-key"), **update})
        rt = compose(configured, dispatcher=LocalDispatcher(), store=store,
                     router=FixedRouter(scripted), resolver=dns)
        server = serve(create_app(rt))
        running = server.__enter__()
        client = httpx.Client(base_url=running.url, timeout=60, headers=KEY, trust_env=False)
        opened.append((server, client))
        return rt, client

    yield make
    for server, client in opened:
        client.close()
        server.__exit__(None, None, None)


def register(api, url, user="alice"):
    return api.put("/v1/notifications/webhook", json={"user": user, "url": url})


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:6379/", "http://169.254.169.254/latest/meta-data/",
    "http://[::1]:8080/hook", "http://localhost:6379", "http://LOCALHOST./x",
    "http://10.0.0.5/hook", "http://192.168.1.1/", "http://172.16.0.1/",
    "http://[::ffff:127.0.0.1]/", "http://2130706433/", "http://0x7f.1/", "http://0.0.0.0:80/",
    "http://[fd00:ec2::254]/", "http://metadata.google.internal/computeMetadata/v1/",
    "https://intranet.example.test/hook",  # a name that resolves to a private address
    "https://nowhere.example.test/hook",  # a name that does not resolve: the same answer
    "https://user:secret@hooks.example.test/hook",  # credentials in the URL
])
def test_local_private_and_metadata_urls_are_refused_at_registration(make_api, url):
    rt, api = make_api()
    response = register(api, url)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "webhook_url_refused" and error["param"] == "url"
    assert error["message"] == f"url refused: {inbox.REFUSED}"
    assert api.get("/v1/notifications/webhook", params={"user": "alice"}).status_code == 404
    with pytest.raises(NotFound):  # nothing stored, not even the user
        rt.store.users.resolve("http:alice")


def test_a_url_without_scheme_is_refused(make_api):
    _, api = make_api()
    response = register(api, "localhost:6379")
    assert response.status_code == 400 and response.json()["error"]["code"] == "bad_webhook_url"


def test_a_name_that_turns_private_after_registration_is_refused_at_send(make_api, dns,
                                                                         scripted):
    recorder = Recorder()
    with serve(recorder) as hook:
        rt, api = make_api()
        url = f"http://hooks.example.test:{hook.port}/hook"
        assert register(api, url).status_code == 200  # public when registered
        dns.names["hooks.example.test"] = "127.0.0.1"  # then rebound to this host
        user_id, job = make_job_over_http(rt, scripted)
        scripted.then("Sunny.")
        run_job(rt, user_id, job)
        [delivery] = rt.store.deliveries.for_chat(user_id, job.chat_key)
    assert recorder.hits == []  # refused before any connection
    assert dns.asked.count("hooks.example.test") == 2  # at registration and at the push
    assert delivery.status == "pending" and delivery.last_error == inbox.NOT_TAKEN
    unread = api.get("/v1/notifications", params={"user": "alice"}).json()["data"]
    assert [n["text"] for n in unread] == ["⏰ weather\n\nSunny."]


def test_a_push_goes_to_the_checked_address_without_proxy_or_redirect(make_api, dns, scripted,
                                                                      monkeypatch):
    """The name only our DNS knows is reached: the request went to the address checked (the
    system's DNS was never asked), with the name in Host; the proxy the environment names and
    the redirect's target get nothing, and a redirect is not a delivery."""
    proxy, elsewhere = Recorder(), Recorder()
    with serve(proxy) as proxy_server, serve(elsewhere) as other:
        recorder = Recorder([(307, {"Location": f"{other.url}/stolen"})])
        with serve(recorder) as hook:
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
                monkeypatch.setenv(name, proxy_server.url)
            for name in ("NO_PROXY", "no_proxy"):
                monkeypatch.delenv(name, raising=False)
            dns.names["hooks.example.test"] = "127.0.0.1"
            rt, api = make_api(web_allow_hosts=[f"hooks.example.test:{hook.port}"])
            url = f"http://hooks.example.test:{hook.port}/hook"
            assert register(api, url).status_code == 200
            user_id, job = make_job_over_http(rt, scripted)
            scripted.then("Cloudy.")
            run_job(rt, user_id, job)
            [delivery] = rt.store.deliveries.for_chat(user_id, job.chat_key)
            assert delivery.status == "pending" and delivery.last_error == inbox.NOT_TAKEN
            rt.store.clock.advance(60)
            assert asyncio.run(rt.delivery.sweep()) == 1
    assert recorder.hits == [("POST", "/hook", f"hooks.example.test:{hook.port}")] * 2
    assert proxy.hits == [] and elsewhere.hits == []
    assert rt.store.deliveries.get(user_id, delivery.id).status == "sent"


def test_a_failed_push_reads_the_same_whatever_answered(make_api, dns, scripted):
    """No port scan through the inbox: a 404, a closed port and a 500 leave the same record."""
    closed = free_port()
    answering = Recorder([(404, {})])
    failing = Recorder([(500, {})])
    with serve(answering) as a, serve(failing) as f:
        rt, api = make_api(web_allow_hosts=["127.0.0.1"])
        errors = []
        for user, port in (("ann", a.port), ("cal", closed), ("eve", f.port)):
            assert register(api, f"http://127.0.0.1:{port}/hook", user).status_code == 200
            user_id, job = make_job_over_http(rt, scripted, user)
            scripted.then("Done.")
            run_job(rt, user_id, job)
            [delivery] = rt.store.deliveries.for_chat(user_id, job.chat_key)
            errors.append((delivery.status, delivery.attempts, delivery.last_error))
    assert len(answering.hits) == len(failing.hits) == 1
    assert errors == [("pending", 1, inbox.NOT_TAKEN)] * 3
