"""Text that arrives in many small pieces, kept as few objects (sans-IO, MEM-002).

A model streams its reply a few characters per event; a list of those pieces costs a Python
object (about 50 bytes plus a pointer) per piece, several times the text itself, and a
never-ending stream is stopped only at `max_output_bytes`. `TextParts` joins every
`BLOCK_PIECES` small pieces into one string as they come, so holding a reply costs its
characters plus one object per block, and reading it whole (`text()`) is one join of a few
blocks. A large piece is kept as it is (its object costs nothing next to its size), so the
holders of one stream's text (the attempt, the journal's recorder) share it, not copy it.
"""

from __future__ import annotations

__all__ = ["BLOCK_PIECES", "LARGE_PIECE", "TextParts"]

BLOCK_PIECES = 256
"""Small pieces joined into one block: at most this many are pending at a time."""
LARGE_PIECE = 1024
"""Characters from which a piece is kept as its own block, uncopied."""


class TextParts:
    """An append-only text; `size` counts characters without joining anything."""

    __slots__ = ("_blocks", "_pending", "size")

    def __init__(self) -> None:
        self._blocks: list[str] = []
        self._pending: list[str] = []
        self.size = 0

    def __bool__(self) -> bool:
        return self.size > 0

    def append(self, text: str) -> None:
        pending = self._pending
        size = len(text)
        self.size += size
        if size >= LARGE_PIECE:
            if pending:
                self._blocks.append("".join(pending))
                pending.clear()
            self._blocks.append(text)
            return
        pending.append(text)
        if len(pending) >= BLOCK_PIECES:
            self._blocks.append("".join(pending))
            pending.clear()

    def text(self) -> str:
        """The whole text; it is kept as one block afterwards (a second call is free)."""
        if self._pending:
            self._blocks.append("".join(self._pending))
            self._pending.clear()
        if len(self._blocks) > 1:
            self._blocks = ["".join(self._blocks)]
        return self._blocks[0] if self._blocks else ""

    @property
    def objects(self) -> int:
        """Strings held (blocks plus pending pieces): what the bound is about."""
        return len(self._blocks) + len(self._pending)
