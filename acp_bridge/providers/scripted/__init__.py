"""acp_bridge.providers.scripted."""
