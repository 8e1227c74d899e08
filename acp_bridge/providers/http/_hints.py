"""What to tell a user when a provider endpoint answers badly: the URL asked and the fix.

One place for the hints that the model stream's errors, `acp-bridge-agent login` and
`acp-bridge-agent doctor` all show (spec/configuration.md, CONF-ERR-003): a 401/403 names the key
variable and the login command, a 404 shows the URL that was asked and suggests a missing
`/v1`, a refused connection says no server is running at the URL. URLs are shown without
userinfo and query string (they may carry secrets).
"""

from __future__ import annotations

import errno
import socket
import ssl
from urllib.parse import urlsplit

from acp_bridge.providers._registry import api_key_env_vars, is_local_url

__all__ = ["connect_failure", "shown_url", "status_hint"]


def shown_url(url: str) -> str:
    """`url` as it may be shown: scheme, host, port and path only."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _key_fix(provider: str) -> str:
    names = " or ".join(api_key_env_vars(provider)) or "the provider's key variable"
    return f"set {names}, or run `acp-bridge-agent login --provider {provider}`"


def status_hint(provider: str, status: int, url: str) -> str:
    """The likely fix for an HTTP error status from `url` (one sentence)."""
    asked = shown_url(url)
    if status in (401, 403):
        return f"{asked} refused the API key (HTTP {status}): {_key_fix(provider)}"
    if status == 404:
        path = urlsplit(url).path
        if provider in ("openai", "gemini") and not any(
            f"/v{n}" in path for n in ("1", "1beta", "1alpha")
        ):
            version = "/v1" if provider == "openai" else "/v1beta"
            return (
                f"nothing at {asked} (HTTP 404): the base URL probably lacks {version}; "
                f"try --base-url ending in {version}, or check --model"
            )
        return f"nothing at {asked} (HTTP 404): check --base-url and --model"
    return f"{asked} answered HTTP {status}"


def _causes(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def connect_failure(exc: BaseException, url: str) -> tuple[str, str, bool]:
    """(reason, sentence, retryable) for a failure to reach `url`.

    reason is one of "refused", "dns", "tls", "timeout", "unreachable". A TLS failure is
    not retryable (a plain-HTTP server or an untrusted certificate stays so).
    """
    asked = shown_url(url)
    causes = _causes(exc)
    text = " ".join(str(c) for c in causes).lower()
    if any(isinstance(c, ssl.SSLError) for c in causes) or "ssl" in text or "certificate" in text:
        return (
            "tls",
            f"TLS failed with {asked} ({_first_line(causes)}): the server may speak plain "
            "HTTP (use http://) or have a certificate this machine does not trust",
            False,
        )
    if (
        any(isinstance(c, socket.gaierror) for c in causes)
        or "name or service" in text
        or ("name resolution" in text or "nodename nor servname" in text)
    ):
        host = urlsplit(url).hostname or "?"
        return (
            "dns",
            f"cannot resolve the host {host!r} of {asked}: check --base-url and the network (DNS)",
            True,
        )
    refused = any(isinstance(c, ConnectionRefusedError) for c in causes) or (
        "connection refused" in text or f"errno {errno.ECONNREFUSED}" in text
    )
    if refused:
        local = is_local_url(url)
        fix = "start the server, or fix --base-url" if local else "check --base-url"
        return (
            "refused",
            f"no server is running at {asked} (connection refused): {fix}",
            True,
        )
    if "timed out" in text or "timeout" in text:
        return (
            "timeout",
            f"{asked} did not answer in time: check --base-url and the network",
            True,
        )
    return ("unreachable", f"cannot reach {asked} ({_first_line(causes)})", True)


def _first_line(causes: list[BaseException]) -> str:
    for cause in reversed(causes):
        text = str(cause).strip()
        if text:
            return " ".join(text.split())[:160]
    return type(causes[0]).__name__
