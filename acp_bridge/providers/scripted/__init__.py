"""The scripted provider: acp-bridge's embedded default model (no key, no network).

It plays model streams from scripts (JSON files, spec/scripted-stream.md): text, thoughts,
tool calls split into argument fragments, usage, finish reasons and injected faults. It is
stateless: the request says which script, model call and attempt to play. Built-in scripts
ship as package data and are read on first use.
"""

from acp_bridge.providers.scripted._builtins import DEFAULT_SCRIPT, builtin_scripts
from acp_bridge.providers.scripted._checks import ScriptError
from acp_bridge.providers.scripted._model import (
    BreakStep,
    EofStep,
    FinishStep,
    HttpErrorStep,
    RefuseConnectionStep,
    Script,
    ScriptAttempt,
    ScriptCall,
    ScriptStep,
    TextStep,
    ThoughtStep,
    ToolCallStep,
    UsageStep,
)
from acp_bridge.providers.scripted._parse import load_script, loads_script, parse_script
from acp_bridge.providers.scripted._provider import (
    ScriptedProvider,
    ScriptedSettings,
    ScriptSelection,
    create_scripted_provider,
)

__all__ = [
    "DEFAULT_SCRIPT",
    "BreakStep",
    "EofStep",
    "FinishStep",
    "HttpErrorStep",
    "RefuseConnectionStep",
    "Script",
    "ScriptAttempt",
    "ScriptCall",
    "ScriptError",
    "ScriptSelection",
    "ScriptStep",
    "ScriptedProvider",
    "ScriptedSettings",
    "TextStep",
    "ThoughtStep",
    "ToolCallStep",
    "UsageStep",
    "builtin_scripts",
    "create_scripted_provider",
    "load_script",
    "loads_script",
    "parse_script",
]
