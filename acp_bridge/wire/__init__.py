"""Wire layer: bytes <-> JSON frames (sans-IO NDJSON) and the transports that carry them.

Nothing here knows JSON-RPC or ACP.
"""

from acp_bridge.wire._framing import (
    DEFAULT_MAX_LINE_BYTES,
    BadFrame,
    Decoded,
    Frame,
    NdjsonDecoder,
    encode,
    loads,
)
from acp_bridge.wire._pieces import BIG_STRING_CHARS, PIECE_CHARS, encode_pieces, streamable
from acp_bridge.wire._stdio import ClaimedStdio, StdioTransport, open_stdio
from acp_bridge.wire._transport import MemoryTransport, Transport, create_memory_pair

__all__ = [
    "BIG_STRING_CHARS",
    "DEFAULT_MAX_LINE_BYTES",
    "PIECE_CHARS",
    "BadFrame",
    "ClaimedStdio",
    "Decoded",
    "Frame",
    "MemoryTransport",
    "NdjsonDecoder",
    "StdioTransport",
    "Transport",
    "create_memory_pair",
    "encode",
    "encode_pieces",
    "loads",
    "open_stdio",
    "streamable",
]
