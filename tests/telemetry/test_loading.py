"""What an application without the OpenTelemetry SDK pays: nothing is imported (mcpkit looks
only at modules the application imported itself), and an SDK set up later, after the server
and the client exist, is found at the next request with no mcpkit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_SDK = """
import asyncio, sys
from mcpkit import Client, telemetry
from tests.telemetry.app import server

async def main():
    async with Client(server) as client:
        await client.call_tool("get-weather", {"city": "Oslo"})
    print(sorted(m for m in sys.modules if m.startswith("opentelemetry")), telemetry.current())

asyncio.run(main())
"""

SDK_SET_UP_LATER = """
import asyncio
from mcpkit import Client
from tests.telemetry.app import server

async def main():
    async with Client(server) as client:
        await client.call_tool("get-weather", {"city": "Oslo"})  # no SDK yet: no span
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        await client.call_tool("get-weather", {"city": "Rome"})
    print(sorted((s.name, s.kind.name) for s in exporter.get_finished_spans()))

asyncio.run(main())
"""


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_without_the_sdk_nothing_is_imported_or_recorded() -> None:
    assert run(WITHOUT_SDK) == "[] None"


def test_an_sdk_set_up_later_is_found() -> None:
    assert run(SDK_SET_UP_LATER) == str(
        [("tools/call get-weather", "CLIENT"), ("tools/call get-weather", "SERVER")]
    )
