"""acp_bridge.turn."""
