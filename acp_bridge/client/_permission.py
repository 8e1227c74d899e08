"""How the reference client answers `session/request_permission`: a policy, picked up front.

A policy is a plain function of the request's params returning the `optionId` to select, or
None to answer `cancelled`. Real editors ask the user; the reference client and the demo
answer by policy so that runs are repeatable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

__all__ = ["PermissionPolicy", "allow_once", "cancel_every_prompt", "choose_option"]

PermissionPolicy: TypeAlias = Callable[[Mapping[str, Any]], "str | None"]
"""`params` of a permission request -> the `optionId` to select, or None for `cancelled`."""


def choose_option(kind: str) -> PermissionPolicy:
    """A policy selecting the first option of `kind` (`allow_once`, `reject_always`, ...).

    When no option has that kind it selects the first `reject_once` option (never a broader
    permission than asked for), and answers `cancelled` when there is none either.
    """

    def policy(params: Mapping[str, Any]) -> str | None:
        options = list(params.get("options") or ())
        for wanted in (kind, "reject_once"):
            for option in options:
                if option.get("kind") == wanted:
                    return str(option.get("optionId"))
        return None

    return policy


allow_once: PermissionPolicy = choose_option("allow_once")
"""The default policy: allow this one call."""


def cancel_every_prompt(params: Mapping[str, Any]) -> str | None:
    """A policy answering `cancelled`: the bridge ends the turn with `stopReason: cancelled`."""
    return None
