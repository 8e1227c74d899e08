"""acp_bridge.tools."""
