"""The command line: `acp-bridge-agent` (serve ACP on stdio) and `acp-bridge-agent demo`."""

from acp_bridge.cli._main import build_parser, main
from acp_bridge.cli._settings import BridgeSettings, SettingsError, resolve

__all__ = ["BridgeSettings", "SettingsError", "build_parser", "main", "resolve"]
