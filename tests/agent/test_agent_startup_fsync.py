"""Opening the effect ledger does not fsync its open-time writes; `started` still does
(STARTUP-006).

A start of the agent opens the ledger before it answers `session/new`. The open writes
(schema, `ledger_info`, the `user_version` check that refuses an unwritable file now) need
no durability of their own: the next open redoes them, and the first `started` record, with
`synchronous=FULL` (EFFECT-007), syncs the WAL with them before any effect runs. The system
calls are counted with strace in a fresh interpreter: what remains at an open is what SQLite
syncs for a new WAL file (its header, then the directory), 2 syncs instead of 3.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acp_bridge.turn import EffectLedger

_PROBE = """
import os, sys
from acp_bridge.turn import EffectKey, EffectLedger
ledger = EffectLedger(sys.argv[1])
os.write(2, b"@@opened@@")
ledger.record_started(EffectKey.derive("s1-turn1", "issue_refund", {}), session_id="s1", mode="ask")
os.write(2, b"@@started@@")
ledger.close()
"""


def _strace() -> str:
    found = shutil.which("strace")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("strace is missing under CI (.ci/run installs it)")
        pytest.skip("needs strace (apt-get install strace)")
    return found


@pytest.mark.requirement("STARTUP-006")
def test_opening_the_ledger_syncs_only_a_new_wal_and_its_first_started_record_syncs(
    tmp_path: Path,
) -> None:
    strace = _strace()
    EffectLedger(tmp_path).close()  # an existing ledger, as at every start after the first
    log = tmp_path / "strace.txt"
    argv = [strace, "-f", "-qq", "-o", str(log), "-e", "trace=fsync,fdatasync,write"]
    out = subprocess.run(
        [*argv, sys.executable, "-c", _PROBE, str(tmp_path)],
        capture_output=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    calls = log.read_text().splitlines()
    opened = next(i for i, c in enumerate(calls) if "@@opened@@" in c)
    started = next(i for i, c in enumerate(calls) if "@@started@@" in c)
    syncs = [i for i, c in enumerate(calls) if "fsync(" in c or "fdatasync(" in c]
    at_open = [calls[i].split("(")[0].split()[-1] for i in syncs if i < opened]
    assert at_open == ["fdatasync", "fdatasync"], calls[:opened]  # the WAL header, the folder
    assert [i for i in syncs if opened < i < started] != []  # `started` is on disk (EFFECT-007)


@pytest.mark.requirement("STARTUP-006")
def test_the_ledger_records_with_full_sync_after_opening(tmp_path: Path) -> None:
    for _ in range(2):  # a new ledger, then an existing one
        ledger = EffectLedger(tmp_path)
        try:
            assert ledger._db.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
        finally:
            ledger.close()
