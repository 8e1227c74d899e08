"""acp_bridge.protocol."""
