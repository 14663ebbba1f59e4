"""Settings and statistics shared by the harness and the end-to-end child.

Standard library only: e2e.py imports this under bench/.venv-official too.
"""

import statistics
from dataclasses import dataclass

TEXT = "hello world"


@dataclass(frozen=True)
class Settings:
    """How much work one repetition of each workload does."""

    calls: int = 2000  # W1 measured sequential calls
    warmup: int = 200  # W1/W2 unmeasured calls first
    pipelined_calls: int = 5000  # W2 measured calls
    depth: int = 32  # W2 requests in flight
    spawns: int = 3  # W3 cold starts per repetition
    text: str = TEXT

    @classmethod
    def quick(cls) -> "Settings":
        return cls(calls=400, warmup=50, pipelined_calls=1000, spawns=2)


def percentile(sorted_values: list[float], q: float) -> float:
    """The q-th percentile (0..100) of already sorted values, nearest-rank."""
    if not sorted_values:
        raise ValueError("no values")
    rank = max(1, round(q / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


SLICES = 10


def throughput(begin_ns: int, done_ns: list[int]) -> dict[str, float]:
    """calls/s of one run, from the start time and each call's completion time.

    calls_per_s: the median over SLICES equal slices of the calls (each slice's calls over
    its own wall time); a burst of load from elsewhere on a shared machine spoils a slice or
    two, not the figure. calls_per_s_overall: all calls over the whole wall time.
    """
    edges = [begin_ns, *done_ns]  # edges[k]: when k calls had completed
    count = len(done_ns)
    rates = []
    for index in range(SLICES):
        low, high = index * count // SLICES, (index + 1) * count // SLICES
        if high > low:
            rates.append((high - low) / max(edges[high] - edges[low], 1) * 1e9)
    overall = count / max(done_ns[-1] - begin_ns, 1) * 1e9
    return {"calls_per_s": median(rates), "calls_per_s_overall": overall}


def latency_summary(latencies_ns: list[int], begin_ns: int, done_ns: list[int]) -> dict[str, float]:
    """p50/p99 in microseconds and the throughput of one run of sequential calls."""
    ordered = sorted(latencies_ns)
    return {
        "p50_us": percentile(ordered, 50) / 1000,
        "p99_us": percentile(ordered, 99) / 1000,
        **throughput(begin_ns, done_ns),
    }


def median(values: list[float]) -> float:
    return statistics.median(values)
