"""`mcpkit registry server-json`: the MCP Registry's server.json for a PyPI package, run as
the command it is and validated against the registry's published schema (2025-12-11, a
copy in tests/fixtures/registry)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import pytest

APP = Path(__file__).with_name("registry_app.py")
SCHEMA_FILE = Path(__file__).parents[1] / "fixtures" / "registry" / "server.schema.json"
# The published file's digest: the copy is that file, byte for byte.
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
NAME = "io.github.example/weather"


def mcpkit(*arguments: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "mcpkit", "registry", "server-json", str(APP), *arguments]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def generated(*arguments: str) -> dict[str, Any]:
    done = mcpkit("--name", NAME, *arguments)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA_FILE.read_bytes())
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def errors(document: dict[str, Any]) -> list[str]:
    return [error.message for error in validator().iter_errors(document)]


def test_the_schema_is_the_published_one() -> None:
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == SCHEMA_SHA256
    schema = json.loads(SCHEMA_FILE.read_bytes())
    assert schema["$id"].endswith("/schemas/2025-12-11/server.schema.json")
    jsonschema.Draft7Validator.check_schema(schema)


def test_a_stdio_package_with_secret_and_plain_variables() -> None:
    document = generated(
        "--package", "weather-mcp",
        "--secret-env", "WEATHER_API_KEY=your API key",
        "--env", "WEATHER_UNITS",
        "--repository", "https://github.com/example/weather",
    )  # fmt: skip
    assert errors(document) == []
    assert document["$schema"] == validator().schema["$id"]
    assert (document["name"], document["version"], document["title"]) == (NAME, "1.2.0", "Weather")
    assert document["description"] == "Forecasts and alerts for any place on Earth."
    assert document["repository"] == {
        "url": "https://github.com/example/weather",
        "source": "github",
    }
    [package] = document["packages"]
    assert package["registryType"] == "pypi"
    assert (package["identifier"], package["version"]) == ("weather-mcp", "1.2.0")
    assert package["transport"] == {"type": "stdio"}
    assert package["runtimeHint"] == "uvx"
    plain, secret = package["environmentVariables"]
    assert secret == {"name": "WEATHER_API_KEY", "isRequired": True, "isSecret": True,
                      "description": "your API key"}  # fmt: skip
    assert (plain["name"], plain["isSecret"]) == ("WEATHER_UNITS", False)


def test_a_streamable_http_package_with_arguments() -> None:
    document = generated(
        "--package", "weather-mcp", "--version", "2.0.1",
        "--transport", "streamable-http", "--url", "http://localhost:{port}/mcp",
        "--arg=--transport", "--arg=http",  # a value starting with - takes "="
    )  # fmt: skip
    assert errors(document) == []
    [package] = document["packages"]
    assert package["transport"] == {"type": "streamable-http", "url": "http://localhost:{port}/mcp"}
    assert package["version"] == document["version"] == "2.0.1"
    assert [a["value"] for a in package["packageArguments"]] == ["--transport", "http"]


def test_an_installed_package_gives_its_version_and_summary() -> None:
    document = generated("--package", "httpx")
    assert errors(document) == []
    assert document["version"] == metadata.version("httpx")
    assert document["description"] == metadata.metadata("httpx")["Summary"]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--name", "weather", "--package", "w"], "--name must look like"),
        (["--name", NAME, "--package", "w", "--version", "latest"], "one exact version"),
        (["--name", NAME, "--package", "w", "--version", "^1.2"], "one exact version"),
        (["--name", NAME, "--package", "w", "--description", "x" * 101], "at most 100"),
        (["--name", NAME, "--package", "w", "--transport", "streamable-http"], "needs --url"),
    ],
)
def test_what_the_registry_would_refuse_is_a_usage_error(arguments: list[str], said: str) -> None:
    done = mcpkit(*arguments)
    assert done.returncode == 2
    assert said in done.stderr
    assert done.stdout == ""


def test_the_schema_refuses_what_the_command_refuses() -> None:
    """The validation is not vacuous: the schema itself rejects a long description, a bad name
    and a package without a transport."""
    document = generated("--package", "weather-mcp")
    assert errors({**document, "description": "x" * 101})
    assert errors({**document, "name": "weather"})
    assert errors({**document, "packages": [{"registryType": "pypi", "identifier": "w"}]})


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "server.json"
    done = mcpkit("--name", NAME, "--package", "weather-mcp", "--output", str(target))
    assert (done.returncode, done.stdout) == (0, "")
    assert errors(json.loads(target.read_text())) == []
