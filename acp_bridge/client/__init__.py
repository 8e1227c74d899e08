"""acp_bridge.client."""
