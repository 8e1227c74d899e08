"""Reaching a provider from the command line: list its models, or say exactly why not.

Used by `acp-bridge-agent login` (to test a pasted key before storing it) and
`acp-bridge-agent doctor`.
One bounded GET of the provider's model list (`{base}/models`, Anthropic `{base}/v1/models`);
every failure becomes one sentence with the URL asked and the likely fix (the hints shared
with the model stream, `acp_bridge.providers.http._hints`). The key is never shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["Probe", "list_models", "models_url"]

_BODY_LIMIT = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Probe:
    """What one model-list request found. `reason` is "ok", "http-<status>", or a
    connection failure ("dns", "refused", "tls", "timeout", "unreachable")."""

    ok: bool
    reason: str
    line: str
    models: tuple[str, ...] = ()


def models_url(provider: str, base_url: str | None) -> str:
    from acp_bridge.providers import _registry as registry

    base = (base_url or registry.default_base_url(provider) or "").rstrip("/")
    return f"{base}/v1/models" if provider == "anthropic" else f"{base}/models"


def _headers(provider: str, key: str | None) -> dict[str, str]:
    headers = {"accept": "application/json"}
    if provider == "anthropic":
        headers["anthropic-version"] = "2023-06-01"
        if key:
            headers["x-api-key"] = key
    elif provider == "gemini":
        if key:
            headers["x-goog-api-key"] = key
    elif key:
        headers["authorization"] = f"Bearer {key}"
    return headers


def _model_ids(provider: str, body: bytes) -> tuple[str, ...]:
    try:
        payload = json.loads(body)
    except ValueError:
        return ()
    if not isinstance(payload, dict):
        return ()
    items = payload.get("models" if provider == "gemini" else "data")
    if not isinstance(items, list):
        return ()
    field = "name" if provider == "gemini" else "id"
    ids = (item.get(field) for item in items if isinstance(item, dict))
    return tuple(i.removeprefix("models/") for i in ids if isinstance(i, str))


def list_models(
    provider: str, base_url: str | None, key: str | None, timeout: float = 10.0
) -> Probe:
    """One bounded model-list request against the provider."""
    import httpx

    from acp_bridge.providers.http._hints import connect_failure, shown_url, status_hint

    url = models_url(provider, base_url)
    try:
        with (
            httpx.Client(timeout=httpx.Timeout(timeout)) as client,
            client.stream("GET", url, headers=_headers(provider, key)) as response,
        ):
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > _BODY_LIMIT:
                    break
            status = response.status_code
    except httpx.UnsupportedProtocol:
        return Probe(False, "bad-url", f"{url!r} is not an http(s) URL: fix --base-url")
    except httpx.TimeoutException:
        return Probe(False, "timeout", f"{shown_url(url)} did not answer within {timeout:g} s")
    except httpx.HTTPError as exc:
        reason, sentence, _ = connect_failure(exc, url)
        return Probe(False, reason, sentence)
    if 200 <= status < 300:
        models = _model_ids(provider, body)
        return Probe(True, "ok", f"{shown_url(url)} lists {len(models)} model(s)", models)
    return Probe(False, f"http-{status}", status_hint(provider, status, url))
