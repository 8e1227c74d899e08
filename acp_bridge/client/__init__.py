"""The reference ACP client: an editor-side reducer and a small client that spawns acp-bridge.

- `reduce` / `EditorView`: turns `session/update`s (plain JSON, as on the wire) into what an
  editor shows, honouring the reset flag (spec/reset-extension.md). Pure, no event loop.
- `AcpClient` / `connect` / `spawn_bridge`: the editor side of a connection. It launches
  `acp-bridge` as editors do, serves `fs/*` and `terminal/*` inside the session's
  directories, answers permission prompts by policy, and records every message.

spec/editor-conformance.md says what an editor must show for each built-in script; this
package is its executable reference.
"""

from acp_bridge.client._client import AcpClient, connect
from acp_bridge.client._entries import (
    Entry,
    MessageEntry,
    MessageRole,
    PlanEntry,
    RetryNotice,
    ToolCallEntry,
)
from acp_bridge.client._events import EditorEvent, PermissionAsked, PromptSent, update_of
from acp_bridge.client._outcome import PromptOutcome, WireMessage
from acp_bridge.client._permission import (
    PermissionPolicy,
    allow_once,
    cancel_every_prompt,
    choose_option,
)
from acp_bridge.client._process import (
    BridgeProcess,
    ProcessTransport,
    bridge_command,
    spawn_bridge,
)
from acp_bridge.client._render import render_view
from acp_bridge.client._view import EditorView, ReduceMode, reduce

__all__ = [
    "AcpClient",
    "BridgeProcess",
    "EditorEvent",
    "EditorView",
    "Entry",
    "MessageEntry",
    "MessageRole",
    "PermissionAsked",
    "PermissionPolicy",
    "PlanEntry",
    "ProcessTransport",
    "PromptOutcome",
    "PromptSent",
    "ReduceMode",
    "RetryNotice",
    "ToolCallEntry",
    "WireMessage",
    "allow_once",
    "bridge_command",
    "cancel_every_prompt",
    "choose_option",
    "connect",
    "reduce",
    "render_view",
    "spawn_bridge",
    "update_of",
]
