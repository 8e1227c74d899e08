"""acp_bridge.jsonrpc."""
