"""Size limits of the tool set and how large text is cut down for the model.

The model reads a bounded amount of every tool's output; what was cut is always said with a
marker it can read (``[... 12345 more bytes truncated ...]``). The editor gets the whole text
where the protocol allows (diffs, text content, its own terminals).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ToolLimits", "fenced", "truncate_head", "truncate_middle", "truncation_marker"]


@dataclass(frozen=True, slots=True)
class ToolLimits:
    """Bounds of the tool set. Byte counts are UTF-8 bytes.

    Attributes:
        read_bytes: text of one `read_file` shown to the model.
        read_lines: lines of one `read_file` asked of the editor when the model gave no
            `limit`, so a huge file is not sent whole to be cut (PERF-BIG-003).
        model_output_bytes: command output and search results shown to the model.
        max_file_bytes: the largest file read or edited from the local disk.
        command_capture_bytes: command output kept in memory (head and tail) and the
            `outputByteLimit` asked of an editor terminal.
        default_timeout_seconds / max_timeout_seconds: `run_command` timeouts.
        search_max_matches, search_max_line_chars: `search_files` bounds (a file is searched
            whatever its size, in blocks).
        list_max_entries: `list_directory` entries shown.
    """

    read_bytes: int = 100_000
    read_lines: int = 2_000
    model_output_bytes: int = 30_000
    max_file_bytes: int = 10_000_000
    command_capture_bytes: int = 1_000_000
    default_timeout_seconds: float = 120.0
    max_timeout_seconds: float = 600.0
    search_max_matches: int = 200
    search_max_line_chars: int = 300
    list_max_entries: int = 1_000


def truncation_marker(omitted_bytes: int) -> str:
    return f"[... {omitted_bytes} more bytes truncated ...]"


def _cut(data: bytes, size: int) -> str:
    # A cut inside a multi-byte character drops that character, never mangles it.
    return data[:size].decode("utf-8", errors="ignore")


def truncate_head(text: str, limit: int) -> tuple[str, int]:
    """Keep the start of `text` within `limit` bytes, ending at a line break when one is near.

    Returns the kept text and how many bytes were dropped (0 when nothing was).
    """
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, 0
    head = data[:limit]
    newline = head.rfind(b"\n")
    if newline >= limit // 2:
        head = head[: newline + 1]
    kept = _cut(head, len(head))
    return kept, len(data) - len(kept.encode("utf-8"))


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and the tail of `text` (errors are usually at the end) within `limit`."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    half = max(limit // 2, 1)
    head = _cut(data, half)
    tail = data[len(data) - half :].decode("utf-8", errors="ignore")
    omitted = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return f"{head}\n{truncation_marker(omitted)}\n{tail}"


def fenced(text: str) -> str:
    """`text` as a Markdown code block (ACP clients render text content as Markdown)."""
    longest = 0
    run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}\n{body}{fence}"
