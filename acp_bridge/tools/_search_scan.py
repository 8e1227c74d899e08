"""Matching one opened file against the pattern: line by line, streamed, binary skipped.

Both search engines end here: the ripgrep engine only names the files that match and every
line shown to the model is read again through a descriptor opened beneath the workspace
(`_beneath`), so what is shown is exactly what the Python engine would show. A file holding a
NUL byte is binary: nothing from the NUL's buffer on is searched, as ripgrep does. Files are
read in blocks, so a large file costs a block of memory, not its size; a block with no match
is skipped with one search over the block.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

__all__ = ["FileScan", "Pattern", "scan_file"]

_BUFFER = 64 * 1024  # ripgrep's line buffer
# A per-line match implies a match of the whole block in MULTILINE mode, except for these.
_LINE_ONLY = re.compile(r"\\[AZ]|\(\?<?[=!]")


@dataclass(frozen=True, slots=True)
class Pattern:
    """The compiled pattern, and a whole-block pre-filter when one is exact."""

    line: re.Pattern[str]
    block: re.Pattern[str] | None

    @classmethod
    def compile(cls, pattern: str) -> Pattern:
        line = re.compile(pattern)
        block = None if _LINE_ONLY.search(pattern) else re.compile(pattern, re.MULTILINE)
        return cls(line, block)


@dataclass(slots=True)
class FileScan:
    """Matching lines of one file, as (line number, text); `binary` when a NUL byte ended it."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    binary: bool = False
    cut: bool = False  # stopped at the budget before the end of the file


def _cut_line(line: str, max_chars: int) -> str:
    text = line.rstrip("\r")
    return text if len(text) <= max_chars else text[:max_chars] + " [...]"


def scan_file(fd: int, pattern: Pattern, budget: int, max_chars: int) -> FileScan:
    """Read `fd` to its end (or until `budget` lines matched); the caller closes `fd`.

    Read in ripgrep's fills (a 64 KiB buffer, tripled when one line fills it): the fill in
    which a NUL byte appears is not searched and ends the file, so the lines shown from a
    file that turns out binary late are exactly those ripgrep shows.
    """
    found = FileScan()
    number = 0
    capacity = _BUFFER
    carry = b""
    while True:
        if len(carry) >= capacity:
            capacity *= 3
        block = os.read(fd, capacity - len(carry))
        if b"\x00" in block:
            found.binary = True
            return found
        if not block:
            if not carry:
                return found
            data, carry = carry + b"\n", b""
        else:
            end = block.rfind(b"\n")
            if end < 0:
                carry += block
                continue
            data, carry = carry + block[: end + 1], block[end + 1 :]
        text = data.decode("utf-8", errors="replace")
        if pattern.block is not None and pattern.block.search(text) is None:
            number += text.count("\n")
        else:
            for line in text.split("\n")[:-1]:
                number += 1
                if pattern.line.search(line) is not None:
                    found.lines.append((number, _cut_line(line, max_chars)))
                    if len(found.lines) >= budget:
                        found.cut = True
                        return found
        if not block:
            return found
