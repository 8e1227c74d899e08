"""acp_bridge.providers.http."""
