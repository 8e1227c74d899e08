"""acp-bridge: a retry-safe Agent Client Protocol (ACP v1) agent."""

__version__ = "0.1.0"

__all__ = ["__version__"]
