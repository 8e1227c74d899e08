"""The effect ledger: which effect keys started and which are done, durably, in SQLite.

File ``effects.sqlite3`` in the state directory the agent layer resolves (``--state-dir``,
``ACP_BRIDGE_STATE_DIR``, the user state dir). A key is recorded `started` (committed before the
tool runs) and `done` with its serialised `ToolOutcome` (spec/effect-keys.md, EFFECT-007..).

Calls are synchronous on purpose: each is one indexed single-row statement in its own
transaction (WAL, ``synchronous=FULL`` so `started` is on disk before the effect happens),
typically well under a millisecond plus one fsync; a worker thread would cost as much as the
work and would need its own locking. The busy timeout bounds the rare wait for another
process's write (WAL readers never wait).
"""

from __future__ import annotations

import enum
import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from acp_bridge._json import JsonValue
from acp_bridge.errors import AcpBridgeError
from acp_bridge.tools._base import (
    DiffContent,
    MediaContent,
    TerminalContent,
    TextContent,
    ToolContent,
    ToolOutcome,
)
from acp_bridge.tools._media import media_from_json, media_to_json
from acp_bridge.tools._stored import diff_from_stored, diff_to_stored
from acp_bridge.turn._effects import EffectKey
from acp_bridge.turn._store_file import StoreFileProblem, file_problem, newer_schema

__all__ = ["EffectLedger", "EffectRecord", "EffectState", "LedgerUnavailable"]

logger = logging.getLogger(__name__)

_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS effects (
    key        TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    tool       TEXT NOT NULL,
    arguments  TEXT NOT NULL,
    step       INTEGER NOT NULL,
    mode       TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('started', 'done')),
    started_at REAL NOT NULL,
    done_at    REAL,
    outcome    TEXT
)
"""
# When this ledger file was started: a session journal with effects from turns older than
# this has outlived a ledger that was lost and re-created (EFFECT-LOST-002). Additive, so
# the schema version stays 1 and an older acp-bridge still opens the file.
_INFO = """
CREATE TABLE IF NOT EXISTS ledger_info (
    created_at REAL NOT NULL
)
"""


class LedgerUnavailable(AcpBridgeError):
    """The ledger could not be opened, read or written (locked past the busy timeout, disk
    full, a newer schema). A side effect whose key cannot be checked and recorded never runs.

    `problem` says why in words without the full path (EFFECT-OPEN-001); the message may
    name the path and goes to the log only."""

    def __init__(self, message: str, problem: StoreFileProblem | None = None) -> None:
        super().__init__(message)
        self.problem = problem or file_problem(
            sqlite3.Error(message), EffectLedger.FILENAME, "its effect ledger"
        )


class EffectState(enum.StrEnum):
    STARTED = "started"  # the effect may have happened; its outcome is unknown until done
    DONE = "done"
    # Never stored: the session journal recorded the key as about to run, and the ledger has
    # no record of it (lost with a deleted WAL, a truncated or replaced file): as unknown as
    # `started` (EFFECT-LOST-001).
    LOST = "lost"


@dataclass(frozen=True, slots=True)
class EffectRecord:
    key: str
    session_id: str
    turn_id: str
    tool: str
    arguments: str
    step: int
    mode: str
    state: EffectState
    started_at: float
    done_at: float | None
    outcome: ToolOutcome | None


class EffectLedger:
    """Effect keys → started / done, shared by every process on one state directory."""

    FILENAME = "effects.sqlite3"

    def __init__(self, state_dir: Path | str | None, *, busy_timeout: float = 5.0) -> None:
        if state_dir is None:
            self.path: Path | None = None
            target = ":memory:"
        else:
            directory = Path(state_dir)
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.path = directory / self.FILENAME
            target = str(self.path)
        self.created_at = time.time()
        self.created = False  # this open found no ledger and started one
        had_bytes = self.path is not None and any(
            _size(Path(f"{self.path}{suffix}")) > 0 for suffix in ("", "-wal")
        )
        try:
            # isolation_level=None: every statement commits on its own (EFFECT-007).
            self._db = sqlite3.connect(target, timeout=busy_timeout, isolation_level=None)
        except sqlite3.Error as error:
            raise _unavailable(f"cannot open the effect ledger {target}", error) from error
        try:
            version = self._open(busy_timeout)
        except sqlite3.Error as error:
            self._db.close()
            raise _unavailable(f"cannot open the effect ledger {target}", error) from error
        if version > _SCHEMA_VERSION:
            self._db.close()
            raise LedgerUnavailable(
                f"{target} has effect-ledger schema {version}; this acp-bridge knows "
                f"{_SCHEMA_VERSION}",
                newer_schema(self.FILENAME, "its effect ledger", version, _SCHEMA_VERSION),
            )
        if self.created and had_bytes:
            # EFFECT-LOST-002: the file was there, its ledger is not (a deleted WAL, a file
            # truncated or replaced). What the journal recorded keeps those effects unknown.
            logger.warning(
                "the effect ledger %s held no ledger (its WAL deleted, or the file truncated "
                "or replaced?); a new one is started, and every effect key the session journal "
                "recorded counts as outcome unknown",
                self.path,
            )

    def _open(self, busy_timeout: float) -> int:
        self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version > _SCHEMA_VERSION:
            return int(version)  # refused before anything is written to it (EFFECT-OPEN-001)
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode = WAL")
        # The writes of an open (schema, ledger_info, the user_version check) need no fsync:
        # each is redone by the next open if lost, and the first `started` (FULL, below)
        # syncs the WAL with them before any effect runs. One fsync less a start (STARTUP-006).
        self._db.execute("PRAGMA synchronous = NORMAL")
        self.created = version == 0
        self._db.execute(_SCHEMA)
        self._db.execute(_INFO)
        row = self._db.execute("SELECT MIN(created_at) FROM ledger_info").fetchone()
        if row[0] is None:  # a new ledger, or one from before ledger_info: its oldest record
            (oldest,) = self._db.execute("SELECT MIN(started_at) FROM effects").fetchone()
            self.created_at = time.time() if oldest is None else float(oldest)
            self._db.execute("INSERT INTO ledger_info (created_at) VALUES (?)", (self.created_at,))
        else:
            self.created_at = float(row[0])
        # Written at every open: a file that cannot be written is refused now, with its reason
        # (EFFECT-OPEN-001), rather than at the first effect.
        self._db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        self._db.execute("PRAGMA synchronous = FULL")  # every record from here: EFFECT-007
        return int(version)

    @classmethod
    def in_memory(cls) -> EffectLedger:
        """A ledger that lives as long as the object (tests, ``--no-state``)."""
        return cls(None)

    def lookup(self, key: EffectKey | str) -> EffectRecord | None:
        row = self._execute(
            "SELECT key, session_id, turn_id, tool, arguments, step, mode, state, started_at,"
            " done_at, outcome FROM effects WHERE key = ?",
            (str(key),),
        ).fetchone()
        return None if row is None else _record(row)

    def _execute(self, sql: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        try:
            return self._db.execute(sql, parameters)
        except sqlite3.Error as error:
            raise _unavailable("effect ledger", error) from error

    def record_started(self, key: EffectKey, *, session_id: str, mode: str) -> None:
        """Durably note that the effect is about to run (before it runs: EFFECT-007)."""
        self._execute(
            "INSERT INTO effects (key, session_id, turn_id, tool, arguments, step, mode, state,"
            " started_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'started', ?)"
            " ON CONFLICT(key) DO UPDATE SET state = 'started', mode = excluded.mode,"
            " session_id = excluded.session_id, started_at = excluded.started_at,"
            " done_at = NULL, outcome = NULL",
            (
                str(key),
                session_id,
                key.turn_id,
                key.tool,
                key.arguments,
                key.step,
                mode,
                time.time(),
            ),
        )

    def record_done(self, key: EffectKey | str, outcome: ToolOutcome) -> None:
        """Durably note the outcome; later runs of the same key reuse it (EFFECT-008)."""
        cursor = self._execute(
            "UPDATE effects SET state = 'done', done_at = ?, outcome = ? WHERE key = ?",
            (time.time(), json.dumps(outcome_to_json(outcome)), str(key)),
        )
        if cursor.rowcount != 1:
            raise KeyError(f"effect {key} was never recorded as started")

    def records(self) -> Iterator[EffectRecord]:
        """Every record, oldest first (for debugging and tests)."""
        rows = self._execute(
            "SELECT key, session_id, turn_id, tool, arguments, step, mode, state, started_at,"
            " done_at, outcome FROM effects ORDER BY started_at, key"
        ).fetchall()
        return (_record(row) for row in rows)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EffectLedger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _unavailable(context: str, error: sqlite3.Error) -> LedgerUnavailable:
    problem = file_problem(error, EffectLedger.FILENAME, "its effect ledger")
    return LedgerUnavailable(f"{context}: {error}", problem)


def _record(row: tuple[Any, ...]) -> EffectRecord:
    key, session_id, turn_id, tool, arguments, step, mode, state, started, done, outcome = row
    return EffectRecord(
        key=key,
        session_id=session_id,
        turn_id=turn_id,
        tool=tool,
        arguments=arguments,
        step=step,
        mode=mode,
        state=EffectState(state),
        started_at=started,
        done_at=done,
        outcome=None if outcome is None else outcome_from_json(json.loads(outcome)),
    )


def outcome_to_json(outcome: ToolOutcome) -> dict[str, JsonValue]:
    """The ledger's serialisation of a `ToolOutcome` (camelCase, like ACP content)."""
    return {
        "ok": outcome.ok,
        "forModel": outcome.for_model,
        "content": [_content_to_json(c) for c in outcome.content],
        "rawOutput": outcome.raw_output,
        "final": outcome.final,
    }


def outcome_from_json(data: Any) -> ToolOutcome:
    return ToolOutcome(
        ok=bool(data["ok"]),
        for_model=str(data["forModel"]),
        content=tuple(_content_from_json(c) for c in data.get("content", [])),
        raw_output=data.get("rawOutput"),
        final=data.get("final", True) is not False,  # records before EFFECT-FINAL-001 were final
    )


def _content_to_json(content: ToolContent) -> dict[str, JsonValue]:
    if isinstance(content, TextContent):
        return {"type": "text", "text": content.text}
    if isinstance(content, DiffContent):
        return diff_to_stored(content)  # a large file's diff by its hashes (PERF-BIG-002)
    if isinstance(content, MediaContent):
        return media_to_json(content)
    return {"type": "terminal", "terminalId": content.terminal_id}


def _content_from_json(data: Any) -> ToolContent:
    kind = data["type"]
    if kind == "text":
        return TextContent(data["text"])
    if kind == "diff":
        return diff_from_stored(data)
    if kind == "media":
        return media_from_json(data)
    return TerminalContent(data["terminalId"])
