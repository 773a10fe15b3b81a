"""Failpoints: named places where a job can be made to die, to prove it resumes from there.

A job must survive being killed anywhere — a machine losing power, an operator's ``kill -9``.
Killing it at a random moment from outside tests some places often and others never, so the
jobs name their stage boundaries here, and ``BOOKDUP_FAILPOINT=<name>[:<n>]`` makes the
process SIGKILL itself the n-th time (default: the first) it passes ``<name>``: a real kill,
at a chosen place (as FoundationDB's and TiKV's failpoints do). Unset, a failpoint costs one
dictionary lookup.

``BOOKDUP_FAILPOINT=<name>[:<n>]:stop`` stops the process there instead (SIGSTOP, as a debugger's
breakpoint) until someone sends SIGCONT: a test can then break something the job depends on —
kill the Elasticsearch node under it — at a chosen place, and let it go on.
"""

from __future__ import annotations

import os
import signal

VARIABLE = "BOOKDUP_FAILPOINT"
_passes: dict[str, int] = {}


def failpoint(name: str) -> None:
    """Die here (SIGKILL, no clean-up), or stop (SIGSTOP), if ``$BOOKDUP_FAILPOINT`` names this
    place and pass."""
    wanted = os.environ.get(VARIABLE)
    if not wanted:
        return
    target, *rest = wanted.split(":")
    if target != name:
        return
    stop = rest[-1:] == ["stop"]
    nth = int(rest[0]) if rest and rest[0] != "stop" else 1
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] == nth or (_passes[name] > nth and not stop):
        os.kill(os.getpid(), signal.SIGSTOP if stop else signal.SIGKILL)
