"""What the cluster's nodes report about themselves, for a job's timers."""

from __future__ import annotations

from elasticsearch import Elasticsearch

__all__ = ["cluster_cpu_seconds"]


def cluster_cpu_seconds(client: Elasticsearch) -> float | None:
    """CPU seconds the cluster's Elasticsearch processes have used since they started (summed
    over nodes); None when the nodes do not say (a user without the ``monitor`` privilege):
    a timer, never a reason to stop a job."""
    try:
        stats = client.nodes.stats(
            metric="process", filter_path="nodes.*.process.cpu.total_in_millis"
        ).body
    except Exception:  # noqa: BLE001 - best effort: the job runs without this figure
        return None
    nodes = stats.get("nodes", {}).values()
    millis = [n.get("process", {}).get("cpu", {}).get("total_in_millis") for n in nodes]
    if not millis or any(m is None or m < 0 for m in millis):
        return None
    return sum(millis) / 1000.0
