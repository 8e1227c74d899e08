"""acp_bridge.agent."""
