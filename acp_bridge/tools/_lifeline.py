"""Child processes that die with the bridge: `lifeline_argv` (Linux `PR_SET_PDEATHSIG`).

A process started with ``start_new_session=True`` leads its own process group, so ending the
group ends it and every descendant that stayed in the group. That covers a clean shutdown; a
``kill -9`` of the bridge runs no clean-up, so the group needs a member that notices: the
lifeline. `lifeline_argv(argv)` wraps a command in a small Python supervisor that

- asks the kernel for SIGTERM when its parent (the bridge) dies (``PR_SET_PDEATHSIG``), and
  checks that the parent did not die before the request took effect;
- runs the command as its child, in the same process group, with the same stdio;
- on SIGTERM, SIGHUP or SIGINT sends SIGKILL to the whole group (itself included), so no
  descendant outlives it;
- once the command exited, sends SIGKILL to every other member of the group still there
  (descendants left behind) and exits with the command's status (a signal as ``128 + N``).

Spawn the result with ``start_new_session=True`` (the supervisor must lead its group). Off
Linux there is no parent-death signal; the supervisor still ends the group when its command
ends or when it is signalled.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["LIFELINE_SOURCE", "lifeline_argv"]

LIFELINE_SOURCE = """\
import os, signal, sys
parent = int(sys.argv[1])
argv = sys.argv[2:]
def end(*_):
    os.killpg(0, signal.SIGKILL)
for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, end)
if sys.platform.startswith("linux"):
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
if os.getppid() != parent:
    end()
child = os.fork()
if child == 0:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        sys.stderr.write(f"cannot run {argv[0]!r}: {error.strerror}\\n")
        os._exit(127)
status = 0
while True:
    try:
        status = os.waitpid(child, 0)[1]
        break
    except InterruptedError:
        continue
    except ChildProcessError:
        break
group, me = os.getpgrp(), os.getpid()
for _ in range(3):
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        end()
    for pid in pids:
        try:
            if pid != me and os.getpgid(pid) == group:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def lifeline_argv(argv: Sequence[str]) -> list[str]:
    """`argv` wrapped in the lifeline supervisor; spawn it with ``start_new_session=True``."""
    if not argv:
        raise ValueError("lifeline_argv needs a command")
    return [sys.executable, "-I", "-S", "-c", LIFELINE_SOURCE, str(os.getpid()), *argv]
