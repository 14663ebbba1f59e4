"""Telemetry finds a provider through OpenTelemetry's public API alone, with each SDK the `otel`
extra allows: the installed one and the lowest (`opentelemetry-api>=X` in pyproject.toml,
installed beside the tests on first use). Each case runs in a process of its own (a provider
can be set once per process): nothing set and the API's no-op providers record nothing; an
SDK tracer provider alone, or an SDK meter provider alone, is found and records."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import asyncio, json
from opentelemetry import metrics, trace
from opentelemetry.version import __version__
from mcpkit import Client, telemetry
from tests.telemetry.app import server

async def call():
    async with Client(server) as client:
        await client.call_tool("get-weather", {"city": "Oslo"})
"""
CASES = {
    "nothing set": ("", "None"),
    "no-op providers": (
        "trace.set_tracer_provider(trace.NoOpTracerProvider())\n"
        "metrics.set_meter_provider(metrics.NoOpMeterProvider())\n",
        "None",
    ),
    "an SDK tracer provider": (
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import "
        "InMemorySpanExporter\n"
        "exporter = InMemorySpanExporter()\n"
        "provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "trace.set_tracer_provider(provider)\n"
        "asyncio.run(call())\n"
        "print('tools/call get-weather' in {s.name for s in exporter.get_finished_spans()})\n",
        "True",
    ),
    "an SDK meter provider": (
        "from opentelemetry.sdk.metrics import MeterProvider\n"
        "from opentelemetry.sdk.metrics.export import InMemoryMetricReader\n"
        "reader = InMemoryMetricReader()\n"
        "metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))\n"
        "asyncio.run(call())\n"
        "data = reader.get_metrics_data()\n"
        "print(sorted({m.name for r in data.resource_metrics for s in r.scope_metrics\n"
        "              for m in s.metrics if m.name.endswith('operation.duration')}))\n",
        "['mcp.client.operation.duration', 'mcp.server.operation.duration']",
    ),
}


def lowest_allowed() -> str:
    """The lowest opentelemetry-api the `otel` extra allows, as an exact version."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (spec,) = [s for s in extras["optional-dependencies"]["otel"] if "opentelemetry-api" in s]
    found = re.fullmatch(r"opentelemetry-api>=(\d+)\.(\d+)(?:\.(\d+))?", spec.replace(" ", ""))
    assert found, f"the otel extra's bound changed shape: {spec}"
    major, minor, patch = found.groups()
    return f"{major}.{minor}.{patch or 0}"


def lowest_site() -> Path:
    """A folder holding the lowest allowed API and SDK (installed there on first use)."""
    version = lowest_allowed()
    site = ROOT / "tests" / f".venv-otel-{version}"  # a pip --target folder (ignored by git)
    if not (site / f"opentelemetry_sdk-{version}.dist-info").exists():
        packages = [f"opentelemetry-api=={version}", f"opentelemetry-sdk=={version}"]
        install = [sys.executable, "-m", "pip", "install", "-q", "--target", str(site)]
        subprocess.run([*install, *packages], check=True, capture_output=True)
    return site


def run(case: str, site: Path | None) -> tuple[str, str]:
    setup, _ = CASES[case]
    code = f"{PRELUDE}\n{setup}\ntelemetry.reset()\nprint(__version__, telemetry.current())"
    paths = [str(site)] if site else []
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": ":".join([*paths, str(ROOT / "src"), str(ROOT)]), "PATH": "/usr/bin"},
    )
    assert done.returncode == 0, done.stderr
    *recorded, last = done.stdout.strip().splitlines()
    version, found = last.split(" ", 1)
    return version, "\n".join([*recorded, "None" if found == "None" else "found"])


@pytest.mark.timeout(180)  # the first run installs the lowest SDK
@pytest.mark.parametrize("sdk", ["installed", "lowest"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_provider_is_found_through_the_public_api(case: str, sdk: str) -> None:
    site = lowest_site() if sdk == "lowest" else None
    version, outcome = run(case, site)
    if sdk == "lowest":
        assert version == lowest_allowed()
    _, expected = CASES[case]
    assert outcome == (expected if expected == "None" else f"{expected}\nfound")


def test_mcpkit_reads_no_private_name_of_opentelemetry() -> None:
    """In a module that speaks of opentelemetry: no private module named, no `module._name`
    of an opentelemetry module, no `getattr(x, "_NAME")`."""
    for path in (ROOT / "src" / "mcpkit").rglob("*.py"):
        text = path.read_text()
        if "opentelemetry" not in text:
            continue
        tree = ast.parse(text)
        modules = {"opentelemetry"} | {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opentelemetry")
            for alias in node.names
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a module's name
                assert not re.fullmatch(r"opentelemetry[\w.]*\._\w*[\w.]*", node.value), path
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
                name = node.args[1] if len(node.args) > 1 else None
                private = isinstance(name, ast.Constant) and re.match(r"_[^_]", str(name.value))
                assert not private, (path, ast.unparse(node))
            if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                assert ast.unparse(node.value) not in modules, (path, ast.unparse(node))
