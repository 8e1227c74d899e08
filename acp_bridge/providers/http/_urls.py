"""Provider endpoint URLs: joined from a base URL, and shown only with credentials removed.

A base URL may carry a query (`https://host/v1?api-version=2024-06-01`, `...?key=X`) and
userinfo (`http://user:pass@host`). The endpoint path is joined onto the base's path, never
after its query, and the two queries are merged (ROBUST-URL-001). Wherever a URL is traced
or logged, userinfo is dropped and every query value is replaced by ``[redacted]``, since a
query is where some gateways take their key (ROBUST-URL-002).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from urllib.parse import quote

import httpx

__all__ = ["endpoint", "install_log_redaction", "redact_url"]

_REDACTED = "[redacted]"


def endpoint(base: str, path: str, params: Mapping[str, str] | None = None) -> str:
    """`path` (starting with "/") under `base`'s path, `base`'s query kept, `params` added."""
    url = httpx.URL(base)
    joined = url.copy_with(path=url.path.rstrip("/") + path)
    if params:
        joined = joined.copy_merge_params(dict(params))
    return str(joined)


def redact_url(url: str | httpx.URL) -> str:
    """`url` without userinfo and with every query value replaced by ``[redacted]``."""
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return _REDACTED
    parsed = parsed.copy_with(username=None, password=None)
    if parsed.query:
        keys = dict.fromkeys(k for k, _ in parsed.params.multi_items())
        query = "&".join(f"{quote(k, safe='')}={_REDACTED}" for k in keys)
        parsed = parsed.copy_with(query=query.encode("ascii"))
    return str(parsed)


class _RedactUrls(logging.Filter):
    """Rewrites URL arguments of httpx's own request log line ("HTTP Request: POST <url>")."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and any(isinstance(a, httpx.URL) for a in args):
            record.args = tuple(redact_url(a) if isinstance(a, httpx.URL) else a for a in args)
        return True


_installed = False


def install_log_redaction() -> None:
    """Makes httpx's INFO request log show redacted URLs (idempotent)."""
    global _installed
    if not _installed:
        _installed = True
        logging.getLogger("httpx").addFilter(_RedactUrls())
