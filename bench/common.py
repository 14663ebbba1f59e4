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


def latency_summary(latencies_ns: list[int], elapsed_s: float) -> dict[str, float]:
    """p50/p99 in microseconds and throughput of one run of sequential calls."""
    ordered = sorted(latencies_ns)
    return {
        "p50_us": percentile(ordered, 50) / 1000,
        "p99_us": percentile(ordered, 99) / 1000,
        "calls_per_s": len(ordered) / elapsed_s,
    }


def median(values: list[float]) -> float:
    return statistics.median(values)
