"""The providers' httpx transport: HTTP/1.1 spoken by the bridge, or httpx's behind a proxy.

`H1Transport` is an `httpx.AsyncBaseTransport` (httpx's public transport API): httpx builds
the request and the `httpx.Response`, this sends the request on a pooled `H1Connection` and
returns the body as an `H1Body` (an `httpx.AsyncByteStream`, also under the response's
`BODY_EXTENSION` key, so `_transport` iterates it without httpx's wrapper). Timeouts are the
request's `timeout` extension (connect, read, write, pool).

Proxies: an `AsyncClient` given a transport ignores HTTP(S)_PROXY / ALL_PROXY / NO_PROXY,
so this transport reads them itself (once, like httpx does, with the stdlib's rules:
`urllib.request.getproxies_environment` and `proxy_bypass_environment`; loopback hosts
always go direct) and sends a request a proxy applies to through
`httpx.AsyncHTTPTransport(proxy=..., retries=0)`, with the same TLS context.
spec/http1.md says what is refused and when httpx takes over.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import ssl
import urllib.request
from collections.abc import Awaitable, Callable, Mapping

import anyio
import httpx

from acp_bridge.providers.http._h1_connection import H1Body, H1Connection, ReadTimeoutValue
from acp_bridge.providers.http._h1_parse import ResponseParser
from acp_bridge.providers.http._h1_pool import H1Pool, Origin

__all__ = ["BODY_EXTENSION", "H1Transport", "env_proxies"]

BODY_EXTENSION = "acp_bridge.h1_body"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_FIELD_VALUE_BAD = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def env_proxies() -> dict[str, str]:
    """The proxy environment the stdlib sees: scheme (or "all", "no") -> value."""
    return {key: value for key, value in urllib.request.getproxies_environment().items() if value}


class H1Transport(httpx.AsyncBaseTransport):
    """HTTP/1.1 for direct URLs, httpx's transport for proxied ones (module docstring)."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> None:
        self._ssl = ssl_context
        self._proxies = dict(env_proxies() if proxies is None else proxies)
        self._pool = H1Pool(self._ssl_context)
        self._proxied: dict[str, httpx.AsyncHTTPTransport] = {}

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            # httpx's default: certifi, or SSL_CERT_FILE / SSL_CERT_DIR when set.
            self._ssl = httpx.create_ssl_context()
        return self._ssl

    @property
    def pool(self) -> H1Pool:
        return self._pool

    def proxy_for(self, url: httpx.URL) -> str | None:
        """The proxy URL a request to `url` goes through, or None (direct)."""
        proxies = self._proxies
        if not proxies or _is_loopback(url.host):
            return None  # a proxy cannot reach this machine's loopback (as Go's net/http)
        proxy = proxies.get(url.scheme) or proxies.get("all")
        if proxy is None:
            return None
        netloc = f"{url.host}:{url.port}" if url.port else url.host
        # NO_PROXY (typeshed lacks this stdlib function).
        if urllib.request.proxy_bypass_environment(netloc, proxies):  # type: ignore[attr-defined]
            return None
        return proxy if "://" in proxy else f"http://{proxy}"

    def _via(self, proxy: str) -> httpx.AsyncHTTPTransport:
        transport = self._proxied.get(proxy)
        if transport is None:
            try:
                transport = httpx.AsyncHTTPTransport(
                    proxy=proxy, retries=0, verify=self._ssl_context()
                )
            except (ImportError, ValueError, httpx.InvalidURL) as exc:
                shown = httpx.URL(proxy).copy_with(username=None, password=None)
                raise httpx.UnsupportedProtocol(f"cannot use the proxy {shown}: {exc}") from exc
            self._proxied[proxy] = transport
        return transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        proxy = self.proxy_for(url)
        if proxy is not None:
            return await self._via(proxy).handle_async_request(request)
        if url.scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(
                f"the URL scheme {url.scheme!r} is not supported (use http:// or https://)",
                request=request,
            )
        timeouts = request.extensions.get("timeout", {})
        origin: Origin = (url.scheme, url.host, url.port or _DEFAULT_PORTS[url.scheme])
        try:
            head_bytes = _request_head(request)
            content = await _request_content(request)
            connection = await self._pool.acquire(
                origin, connect=timeouts.get("connect"), pool=timeouts.get("pool")
            )
        except httpx.RequestError as exc:
            exc.request = request
            raise
        release = functools.partial(self._pool.release, origin)
        read: ReadTimeoutValue = timeouts.get("read")
        try:
            await connection.send(head_bytes + content, timeouts.get("write"))
            parser = ResponseParser()
            head = await connection.response_head(parser, read)
        except BaseException as exc:
            await _abandon(connection, release)
            if isinstance(exc, httpx.RequestError):
                exc.request = request
            raise
        body = H1Body(connection, parser, head, read, release)
        return httpx.Response(
            head.status,
            headers=head.headers,
            stream=body,
            extensions={
                "http_version": head.http_version,
                "reason_phrase": head.reason,
                BODY_EXTENSION: body,
            },
            request=request,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
        proxied, self._proxied = self._proxied, {}
        for transport in proxied.values():
            await transport.aclose()


async def _abandon(
    connection: H1Connection, release: Callable[[H1Connection], Awaitable[None]]
) -> None:
    with anyio.CancelScope(shield=True):
        await connection.aclose()
        await release(connection)


def _request_head(request: httpx.Request) -> bytes:
    lines = [b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), request.url.raw_path)]
    for name, value in request.headers.raw:
        if _TOKEN.fullmatch(name) is None:
            raise httpx.LocalProtocolError(f"illegal header name {name[:40]!r}")
        if _FIELD_VALUE_BAD.search(value) is not None:
            raise httpx.LocalProtocolError(f"illegal value for the header {name.decode()!r}")
        lines.append(b"%s: %s\r\n" % (name, value))
    lines.append(b"\r\n")
    return b"".join(lines)


async def _request_content(request: httpx.Request) -> bytes:
    """The request body as sent: read whole (the providers' bodies are bytes already);
    chunked when httpx framed a body of unknown length so."""
    content = await request.aread()
    if request.headers.get("transfer-encoding", "").lower() == "chunked":
        return (b"%x\r\n%s\r\n" % (len(content), content) if content else b"") + b"0\r\n\r\n"
    return content
