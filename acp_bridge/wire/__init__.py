"""acp_bridge.wire."""
