"""Collects repetitions, reduces them to medians, prints one table per workload.

Every figure is the median across repetitions (for W3, across all spawns). Ratios are
taken between those medians:
  x official  how many times better than the official SDK in the same mode
              (calls/s ratio; for W3 official ms / system ms and official MB / system MB)
  x raw       how many times the raw reference's cost (p50 / raw p50, raw calls/s / calls/s,
              ms / raw ms, MB / raw MB): 1.00 is the floor, lower is better
calls/s is the median over 10 slices of a run's calls (common.throughput); whole-run calls/s
is all calls over the whole wall time, which one burst of outside load can drag down.
srv CPU us/call is the server process's CPU time per measured call (server-alone mode only,
from /proc/<pid>/task/*/schedstat): a cost figure that client noise does not touch.
W4's echo columns are the echo tool measured in the same server process, in blocks
alternating with the `order` blocks; "CPU x official" is official CPU / system CPU.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from common import median
from workloads import MODES, WORKLOADS

Key = tuple[str, str, str]  # (workload, mode, system)


@dataclass
class Results:
    samples: dict[Key, list[dict]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[Key, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)  # system -> reason

    def add(self, key: Key, sample: dict) -> None:
        self.samples[key].append(sample)

    def fail(self, key: Key, reason: str) -> None:
        self.failures[key] = reason

    def medians(self, key: Key) -> dict[str, float] | None:
        runs = self.samples.get(key)
        if not runs:
            return None
        pooled: dict[str, list[float]] = defaultdict(list)
        for run in runs:
            for metric, value in run.items():
                pooled[metric].extend(value if isinstance(value, list) else [value])
        return {metric: median(values) for metric, values in pooled.items()}

    def why_missing(self, key: Key) -> str:
        system = key[2]
        if system in self.unavailable:
            return f"unavailable: {self.unavailable[system]}"
        return f"failed: {self.failures[key]}" if key in self.failures else "not run"

    def to_json(self) -> dict:
        out: dict = {"unavailable": self.unavailable, "results": []}
        for key in sorted(set(self.samples) | set(self.failures)):
            workload, mode, system = key
            out["results"].append(
                {
                    "workload": workload,
                    "mode": mode,
                    "system": system,
                    "median": self.medians(key),
                    "repetitions": self.samples.get(key, []),
                    "failure": self.failures.get(key),
                }
            )
        return out


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "-" if value is None else format(value, spec) + suffix


# (header, metric, format) for the absolute figures of each workload
COLUMNS = {
    "W1": [
        ("p50 us", "p50_us", ",.0f"),
        ("p99 us", "p99_us", ",.0f"),
        ("calls/s", "calls_per_s", ",.0f"),
        ("whole-run calls/s", "calls_per_s_overall", ",.0f"),
        ("srv CPU us/call", "server_cpu_us", ",.0f"),
    ],
    "W2": [
        ("calls/s", "calls_per_s", ",.0f"),
        ("whole-run calls/s", "calls_per_s_overall", ",.0f"),
        ("srv CPU us/call", "server_cpu_us", ",.0f"),
    ],
    "W3": [("start ms", "start_ms", ",.0f"), ("RSS MB", "rss_mb", ",.1f")],
    "W4": [
        ("p50 us", "p50_us", ",.0f"),
        ("p99 us", "p99_us", ",.0f"),
        ("calls/s", "calls_per_s", ",.0f"),
        ("echo p50 us", "echo_p50_us", ",.0f"),
        ("srv CPU us/call", "server_cpu_us", ",.0f"),
        ("echo srv CPU us/call", "echo_server_cpu_us", ",.0f"),
    ],
    "W5": [
        ("p50 us", "p50_us", ",.0f"),
        ("p99 us", "p99_us", ",.0f"),
        ("calls/s", "calls_per_s", ",.0f"),
        ("srv CPU us/call", "server_cpu_us", ",.0f"),
        ("reply bytes", "reply_bytes", ",.0f"),
    ],
}
# (header, metric, higher_is_better) for the ratio columns of each workload
RATIOS = {
    "W1": [("x official", "calls_per_s", True), ("p50 x raw", "p50_us", False)],
    "W2": [("x official", "calls_per_s", True), ("cost x raw", "calls_per_s", True)],
    "W3": [
        ("start x official", "start_ms", False),
        ("start x raw", "start_ms", False),
        ("RSS x official", "rss_mb", False),
        ("RSS x raw", "rss_mb", False),
    ],
    "W4": [
        ("x official", "calls_per_s", True),
        ("p50 x raw", "p50_us", False),
        ("CPU x raw", "server_cpu_us", False),
    ],
    "W5": [
        ("x official", "calls_per_s", True),
        ("CPU x official", "server_cpu_us", False),
        ("p50 x raw", "p50_us", False),
        ("CPU x raw", "server_cpu_us", False),
    ],
}


def _official_ratio(row: dict | None, official: dict | None, metric: str, higher: bool):
    if row is None or official is None:
        return None
    a, b = row.get(metric), official.get(metric)
    return ratio(a, b) if higher else ratio(b, a)


def _raw_ratio(row: dict | None, raw: dict | None, metric: str, higher: bool):
    if row is None or raw is None:
        return None
    a, b = row.get(metric), raw.get(metric)
    return ratio(b, a) if higher else ratio(a, b)


def table(results: Results, workload: str, systems: list[str]) -> list[str]:
    columns, ratios = COLUMNS[workload], RATIOS[workload]
    headers = ["", *(c[0] for c in columns), *(r[0] for r in ratios)]
    rows: list[list[str]] = []
    for mode, title in MODES.items():
        medians = {s: results.medians((workload, mode, s)) for s in systems}
        if not any(medians.values()) and not any(
            (workload, mode, s) in results.failures for s in systems
        ):
            continue
        rows.append([title])
        for system in systems:
            row = medians[system]
            if row is None:
                why = results.why_missing((workload, mode, system))
                rows.append([f"  {system}", why if len(why) <= 100 else why[:97] + "..."])
                continue
            cells = [f"  {system}", *(_fmt(row.get(m), spec) for _, m, spec in columns)]
            for header, metric, higher in ratios:
                other = _raw_ratio if "raw" in header else _official_ratio
                base = medians.get("raw" if "raw" in header else "official")
                cells.append(_fmt(other(row, base, metric, higher), ".2f", "x"))
            rows.append(cells)
    return _render(headers, rows)


def _render(headers: list[str], rows: list[list[str]]) -> list[str]:
    full = [r for r in rows if len(r) == len(headers)]
    widths = [max(len(r[i]) for r in [headers, *full]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        if len(cells) == 1:
            return cells[0]
        if len(cells) == 2:  # system + a message spanning the figures
            return cells[0].ljust(widths[0]) + "  " + cells[1]
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))])

    return [line(headers), *(line(r) for r in rows)]


def print_report(results: Results, workloads: list[str], systems: list[str], header: str) -> None:
    print(header)
    for workload in workloads:
        print(f"\n{workload}  {WORKLOADS[workload]}")
        for text in table(results, workload, systems):
            print(text)
    print("\nTargets (mcpkit)")
    for text in targets(results, workloads):
        print(f"  {text}")


@dataclass(frozen=True)
class Target:
    """A goal for mcpkit. kind: "x_official" or "x_raw" (ratio of mcpkit's median to that
    system's, same mode) or "value" (mcpkit's own median)."""

    workload: str
    mode: str
    text: str
    kind: str
    metric: str
    limit: float
    at_most: bool  # True: value <= limit passes; False: value >= limit passes


TARGETS = [
    Target(
        "W1",
        "e2e",
        "W1 end to end >= 8x official calls/s",
        "x_official",
        "calls_per_s",
        8,
        at_most=False,
    ),
    Target(
        "W1",
        "server",
        "W1 server alone >= 5x official calls/s",
        "x_official",
        "calls_per_s",
        5,
        at_most=False,
    ),
    Target("W1", "server", "W1 server alone p50 <= 2x raw p50", "x_raw", "p50_us", 2, at_most=True),
    Target(
        "W2",
        "e2e",
        "W2 end to end >= 15x official calls/s",
        "x_official",
        "calls_per_s",
        15,
        at_most=False,
    ),
    Target(
        "W2",
        "server",
        "W2 server alone >= 15x official calls/s (informative)",
        "x_official",
        "calls_per_s",
        15,
        at_most=False,
    ),
    Target(
        "W3",
        "server",
        "W3 start, spawn -> initialize result <= 250 ms",
        "value",
        "start_ms",
        250,
        at_most=True,
    ),
    Target(
        "W3",
        "server",
        "W3 server RSS after initialize + one call <= 35 MB",
        "value",
        "rss_mb",
        35,
        at_most=True,
    ),
]


def _target_value(results: Results, target: Target) -> tuple[float | None, str | None]:
    """mcpkit's figure for the target, or None and why it is missing."""
    mine = results.medians((target.workload, target.mode, "mcpkit"))
    if mine is None:
        return None, results.why_missing((target.workload, target.mode, "mcpkit"))
    if target.kind == "value":
        return mine.get(target.metric), None
    base_name = "official" if target.kind == "x_official" else "raw"
    base = results.medians((target.workload, target.mode, base_name))
    if base is None:
        return None, f"{base_name} {results.why_missing((target.workload, target.mode, base_name))}"
    return ratio(mine.get(target.metric), base.get(target.metric)), None


def targets(results: Results, workloads: list[str]) -> list[str]:
    lines = []
    for target in TARGETS:
        if target.workload not in workloads:
            continue
        value, missing = _target_value(results, target)
        if value is None:
            lines.append(f"n/a   {target.text}  ({(missing or 'no data')[:60]})")
            continue
        ok = value <= target.limit if target.at_most else value >= target.limit
        unit = {"start_ms": " ms", "rss_mb": " MB"}.get(target.metric, "x")
        unit = "x" if target.kind != "value" else unit
        lines.append(f"{'PASS' if ok else 'FAIL'}  {target.text}  (measured {value:.2f}{unit})")
    return lines
