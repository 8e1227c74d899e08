"""The exception tree of acp-bridge. Every error the bridge raises on purpose is one of these.

    AcpBridgeError
    ├── FrameError                      wire: a line that is not a JSON-RPC frame
    ├── JsonRpcError(code, data)        jsonrpc: becomes a wire error as-is
    │   ├── ParseError          -32700
    │   ├── InvalidRequest      -32600
    │   ├── MethodNotFound      -32601
    │   ├── InvalidParams       -32602
    │   ├── InternalError       -32603
    │   │   ├── TurnFailed              turn: a model call kept failing (data says why)
    │   │   └── StateDirUnusable        the state directory cannot hold the ledger/sessions
    │   ├── RequestCancelled    -32800
    │   ├── AuthRequired        -32000
    │   └── ResourceNotFound    -32002
    ├── PeerError                       jsonrpc: the other side answered an outbound request
    │   │                               with an error, or went away
    │   └── PeerGone
    ├── ModelStreamError                providers: a model call failed (classified)
    ├── ToolError                       tools: a tool could not do what was asked
    ├── LedgerUnavailable               turn: the effect ledger cannot be opened or written
    └── ScriptError                     providers.scripted: a script file is not valid

The single place where exceptions become wire errors is `acp_bridge.jsonrpc.error_to_wire`.
"""

from __future__ import annotations

from acp_bridge._json import JsonValue

__all__ = [
    "QUOTE_LIMIT",
    "AcpBridgeError",
    "AuthRequired",
    "FrameError",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "JsonRpcError",
    "MethodNotFound",
    "ParseError",
    "PeerError",
    "PeerGone",
    "RequestCancelled",
    "ResourceNotFound",
    "StateDirUnusable",
    "ToolError",
    "clip",
    "quote",
    "session_data",
]

QUOTE_LIMIT = 80
"""Most characters of a peer's value an error message quotes (RPC-ERR-003, ROBUST-ERR-001)."""


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text` cut to `limit` characters, saying how long it was when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def session_data(session_id: str) -> JsonValue:
    """An error's `data` naming a session: the id when it could be one (an overlong value is
    already quoted, cut, in the message, and is not repeated)."""
    return {"sessionId": session_id} if len(session_id) <= QUOTE_LIMIT else None


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A peer's value as an error message shows it: quoted, at most `limit` characters, so an
    error never grows with its input (ROBUST-ERR-001)."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


class AcpBridgeError(Exception):
    """Root of every exception acp-bridge raises on purpose."""


class FrameError(AcpBridgeError):
    """A line from the peer could not become a JSON frame (too long, not UTF-8, not JSON)."""


class JsonRpcError(AcpBridgeError):
    """An error that is sent to the peer as a JSON-RPC error object, exactly as given.

    `message` and `data` go on the wire: never put a traceback, a secret or a raw
    validator dump in them.
    """

    code: int = INTERNAL_ERROR
    default_message: str = "Internal error"

    def __init__(self, message: str | None = None, data: JsonValue = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)


class ParseError(JsonRpcError):
    code = PARSE_ERROR
    default_message = "Parse error"


class InvalidRequest(JsonRpcError):
    code = INVALID_REQUEST
    default_message = "Invalid request"


class MethodNotFound(JsonRpcError):
    code = METHOD_NOT_FOUND
    default_message = "Method not found"


class InvalidParams(JsonRpcError):
    code = INVALID_PARAMS
    default_message = "Invalid params"

    @classmethod
    def at(cls, field: str, message: str, *, got: object = None) -> InvalidParams:
        """A -32602 whose `data` names the field the way validation errors do:
        ``{"errors": [{"field": "cwd", "problem": message}]}``. `got`, the offending value,
        is quoted once, bounded, in the message only (RPC-ERR-003)."""
        field = clip(field)
        problem: JsonValue = {"field": field, "problem": message}
        shown = message if got is None else f"{message} (got {quote(got)})"
        return cls(shown, {"errors": [problem]})


class InternalError(JsonRpcError):
    code = INTERNAL_ERROR
    default_message = "Internal error"


class StateDirUnusable(InternalError):
    """The state directory (`--state-dir` / `ACP_BRIDGE_STATE_DIR`) cannot be used.

    The one error for "state directory unusable", whoever finds it (the startup check, the
    effect ledger, the session store): `problem` is a short machine-readable word
    (`not_a_directory`, `cannot_create`, `read_only`, `full`, `corrupt`, `newer_schema`,
    `busy`, `unusable`), `detail` one sentence without the full path, `fix` what to do when it
    is not the default (another --state-dir) (spec/configuration.md, CONF-STATE-001).
    """

    def __init__(self, problem: str, detail: str, fix: str | None = None) -> None:
        self.problem = problem
        self.detail = detail
        fix = fix or (
            "Set --state-dir or ACP_BRIDGE_STATE_DIR to a writable folder with free space "
            "(default ~/.local/state/acp-bridge)"
        )
        super().__init__(
            f"The state directory is unusable: {detail}. {fix}; it is checked again at the "
            "next request that needs it",
            {
                "reason": "state_dir_unusable",
                "problem": problem,
                "setting": "--state-dir",
                "env": "ACP_BRIDGE_STATE_DIR",
            },
        )


class RequestCancelled(JsonRpcError):
    code = REQUEST_CANCELLED
    default_message = "Request cancelled"


class AuthRequired(JsonRpcError):
    code = AUTH_REQUIRED
    default_message = "Authentication required"


class ResourceNotFound(JsonRpcError):
    code = RESOURCE_NOT_FOUND
    default_message = "Resource not found"


class PeerError(AcpBridgeError):
    """The peer answered one of our requests with an error object."""

    def __init__(self, code: int, message: str, data: JsonValue = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class PeerGone(PeerError):
    """The connection closed while one of our requests was outstanding."""

    def __init__(self, message: str = "the editor closed the connection") -> None:
        super().__init__(INTERNAL_ERROR, message)


class ToolError(AcpBridgeError):
    """A tool could not do what the model asked; the message is shown to the model.

    Raised by `Tool.run`, it means the tool changed nothing (bad input, the editor refused the
    write, the command could not start), so the outcome is not final: running the same call
    again may do it (EFFECT-FINAL-001). `may_have_changed=True` says the failure came after the
    effect may have begun (a terminal that failed mid-run, a write cut half-way): final.
    """

    def __init__(self, message: str, *, may_have_changed: bool = False) -> None:
        super().__init__(message)
        self.may_have_changed = may_have_changed
