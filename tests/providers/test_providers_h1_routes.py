"""The HTTP/1.1 transport's TLS (trustme certificates on loopback) and its proxy routing
(a real forward/CONNECT proxy on loopback, the environment's HTTP(S)_PROXY / NO_PROXY)."""

from __future__ import annotations

import ssl
from pathlib import Path

import anyio
import httpx
import pytest
import trustme
from loopback_h1 import ForwardProxy, KeepAliveServer, chunked, sse_events

from acp_bridge.providers import FaultKind, ModelRequest, ModelStreamError, TextDelta, UserTurn
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider
from acp_bridge.providers.http._h1_transport import H1Transport

pytestmark = pytest.mark.anyio
BOUND = 10
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def server_tls(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("model.example", "127.0.0.1").configure_cert(context)
    return context


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


@pytest.mark.requirement("HTTP1-TLS-001")
async def test_https_on_loopback_with_a_trusted_certificate_and_reuse(
    ca: trustme.CA, server_tls: ssl.SSLContext
) -> None:
    replies = [[chunked(b"one")], [chunked(b"two")]]
    async with KeepAliveServer(replies, tls=server_tls) as server:
        transport = H1Transport(ssl_context=trusting(ca), proxies={})
        async with httpx.AsyncClient(transport=transport, timeout=BOUND) as http:
            with anyio.fail_after(BOUND):
                first = await http.post(server.base_url, content=b"{}")
                second = await http.post(server.base_url, content=b"{}")
    assert (first.content, second.content) == (b"one", b"two")
    assert [seen.connection for seen in server.seen] == [0, 0]


@pytest.mark.requirement("HTTP1-TLS-001")
async def test_the_default_context_is_httpx_s_and_honours_ssl_cert_file(
    ca: trustme.CA, server_tls: ssl.SSLContext, tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    async with KeepAliveServer([[chunked(b"ok")]], tls=server_tls) as server:
        no_proxy_env.delenv("SSL_CERT_FILE", raising=False)
        no_proxy_env.delenv("SSL_CERT_DIR", raising=False)
        async with httpx.AsyncClient(transport=H1Transport(), timeout=BOUND) as http:
            with anyio.fail_after(BOUND), pytest.raises(httpx.ConnectError, match="certificate"):
                await http.post(server.base_url, content=b"")  # certifi does not know it
        no_proxy_env.setenv("SSL_CERT_FILE", str(bundle))
        async with httpx.AsyncClient(transport=H1Transport(), timeout=BOUND) as http:
            with anyio.fail_after(BOUND):
                assert (await http.post(server.base_url, content=b"")).content == b"ok"


@pytest.mark.requirement("HTTP1-PROXY-001")
async def test_http_proxy_from_the_environment_carries_a_model_call(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    """A daily user behind a proxy: the provider's client goes through HTTP_PROXY (the host
    name resolves nowhere but at the proxy, so the answer proves the route)."""
    async with (
        KeepAliveServer([[chunked(*sse_events("via", " proxy"))]]) as server,
        ForwardProxy(("127.0.0.1", server.port)) as proxy,
    ):
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        options = HttpProviderOptions("m", base_url="http://model.example/v1")
        async with OpenAIProvider(options) as model:
            with anyio.fail_after(BOUND):
                request = ModelRequest(model="", messages=[UserTurn(("hi",))])
                events = [event async for event in model.stream(request)]
    assert [e for e in events if isinstance(e, TextDelta)] == [
        TextDelta("via"),
        TextDelta(" proxy"),
    ]
    assert proxy.lines == [b"POST http://model.example/v1/chat/completions HTTP/1.1"]


@pytest.mark.requirement("HTTP1-PROXY-001")
async def test_https_goes_through_the_proxy_s_connect_tunnel(
    ca: trustme.CA, server_tls: ssl.SSLContext
) -> None:
    async with (
        KeepAliveServer([[chunked(b"tunnelled")]], tls=server_tls) as server,
        ForwardProxy(("127.0.0.1", server.port)) as proxy,
    ):
        transport = H1Transport(ssl_context=trusting(ca), proxies={"https": proxy.url})
        async with httpx.AsyncClient(transport=transport, timeout=BOUND) as http:
            with anyio.fail_after(BOUND):
                response = await http.post("https://model.example/v1/x", content=b"{}")
    assert response.content == b"tunnelled"
    assert proxy.lines == [b"CONNECT model.example:443 HTTP/1.1"]


@pytest.mark.requirement("HTTP1-PROXY-001")
def test_which_urls_a_proxy_applies_to(no_proxy_env: pytest.MonkeyPatch) -> None:
    no_proxy_env.setenv("HTTPS_PROXY", "proxy.internal:3128")
    no_proxy_env.setenv("NO_PROXY", "bypassed.example,.corp")
    transport = H1Transport()
    assert transport.proxy_for(httpx.URL("https://api.example/v1")) == "http://proxy.internal:3128"
    assert transport.proxy_for(httpx.URL("http://api.example/v1")) is None  # no HTTP_PROXY
    assert transport.proxy_for(httpx.URL("https://bypassed.example/v1")) is None
    assert transport.proxy_for(httpx.URL("https://llm.corp/v1")) is None
    for local in ("http://localhost:8080", "https://127.0.0.1:1234", "http://[::1]:11434"):
        assert transport.proxy_for(httpx.URL(local)) is None  # loopback never goes to a proxy
    no_proxy_env.setenv("ALL_PROXY", "http://all.internal:8080")
    assert H1Transport().proxy_for(httpx.URL("http://api.example")) == "http://all.internal:8080"


@pytest.mark.requirement("HTTP1-PROXY-001")
async def test_an_unusable_proxy_is_a_precise_error() -> None:
    transport = H1Transport(proxies={"https": "ftp://proxy.internal:21"})
    async with httpx.AsyncClient(transport=transport, timeout=BOUND) as http:
        with pytest.raises(httpx.UnsupportedProtocol, match="cannot use the proxy"):
            await http.post("https://api.example/v1", content=b"")


@pytest.mark.requirement("HTTP1-PROXY-001")
@pytest.mark.requirement("HTTP1-TIMEOUT-001")
async def test_through_a_proxy_the_first_token_deadline_still_ends_a_silent_stream(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    """httpx's transport reads without a bound until the first token (SwitchedReadTimeout);
    the providers' transport bounds those reads with the first-token deadline itself."""
    stall = anyio.Event()
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    async with (
        KeepAliveServer([[head, stall]]) as server,
        ForwardProxy(("127.0.0.1", server.port)) as proxy,
    ):
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        options = HttpProviderOptions(
            "m", base_url="http://model.example/v1", first_token_timeout=0.3, idle_timeout=0.05
        )
        async with OpenAIProvider(options) as model:
            with anyio.fail_after(BOUND), pytest.raises(ModelStreamError) as raised:
                async for _ in model.stream(ModelRequest(model="", messages=[UserTurn(("hi",))])):
                    pass
        stall.set()
    assert raised.value.kind is FaultKind.FIRST_TOKEN_TIMEOUT
    assert proxy.lines == [b"POST http://model.example/v1/chat/completions HTTP/1.1"]
