"""Small probes of a node: its HTTP API and its process (shared by localnode and locate)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path


def get_json(url: str, timeout: float = 5.0) -> tuple[dict | None, bool]:
    """(body, is_elasticsearch); (None, False) when nothing answers. The product header, not the
    body, says whether Elasticsearch answered: anything can send JSON."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            is_es = resp.headers.get("X-Elastic-Product") == "Elasticsearch"
            return json.loads(resp.read() or b"{}"), is_es
    except urllib.error.HTTPError as exc:
        return None, exc.headers.get("X-Elastic-Product") == "Elasticsearch"
    except (OSError, ValueError):
        return None, False


def is_es_process(pid: int) -> bool:
    """Guards against a recycled pid from a stale pidfile."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"org.elasticsearch" in cmdline


def read_pid(pidfile: Path) -> int | None:
    """The live Elasticsearch pid a pidfile names; None when absent, garbled or stale."""
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if is_es_process(pid) else None
