"""Settings and statistics shared by the harness and the end-to-end child.

Standard library only: e2e.py imports this under bench/.venv-official too.
"""

import statistics
from dataclasses import dataclass

TEXT = "hello world"

# W4: the arguments of every `order` call, and the receipt each server must answer with
ORDER_ARGUMENTS = {
    "customer": {
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "address": {"street": "12 St James's Square", "city": "London", "zip": "SW1Y 4JH"},
    },
    "items": [
        {"sku": "BK-0001", "quantity": 2, "price": 12.5},
        {"sku": "PN-0042", "quantity": 1, "price": 3.99},
        {"sku": "NB-0007", "quantity": 3, "price": 7.25},
    ],
}
ORDER_RECEIPT = {"customer": "Ada Lovelace", "item_count": 6, "total": 50.74}
TOOL_COUNT = 100  # W5: tools in every tools/list answer (servers/many_tools.py)


@dataclass(frozen=True)
class Settings:
    """How much work one repetition of each workload does."""

    calls: int = 2000  # W1 measured sequential calls
    warmup: int = 200  # W1/W2 unmeasured calls first
    pipelined_calls: int = 5000  # W2 measured calls
    depth: int = 32  # W2 requests in flight
    spawns: int = 3  # W3 cold starts per repetition
    model_calls: int = 600  # W4 measured calls of each tool (order, echo), in alternate blocks
    model_warmup: int = 100  # W4 unmeasured calls of each tool first
    list_calls: int = 200  # W5 measured tools/list requests
    list_warmup: int = 20  # W5 unmeasured requests first
    text: str = TEXT

    @classmethod
    def quick(cls) -> "Settings":
        return cls(
            calls=400,
            warmup=50,
            pipelined_calls=1000,
            spawns=2,
            model_calls=200,
            model_warmup=30,
            list_calls=100,
            list_warmup=10,
        )


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


def blocks_summary(blocks: list[tuple[int, list[int], list[int]]]) -> dict[str, float]:
    """Like latency_summary, for sequential calls made in several blocks with other work
    in between: (begin, latencies, completion times) per block. calls_per_s is the median
    of the blocks' own rates, calls_per_s_overall all calls over the blocks' summed time."""
    latencies = sorted(ns for _, block, _ in blocks for ns in block)
    rates, calls, wall = [], 0, 0
    for begin, _, done in blocks:
        if done:
            elapsed = max(done[-1] - begin, 1)
            rates.append(len(done) / elapsed * 1e9)
            calls, wall = calls + len(done), wall + elapsed
    return {
        "p50_us": percentile(latencies, 50) / 1000,
        "p99_us": percentile(latencies, 99) / 1000,
        "calls_per_s": median(rates),
        "calls_per_s_overall": calls / max(wall, 1) * 1e9,
    }


def median(values: list[float]) -> float:
    return statistics.median(values)
