"""The three systems under test, and the official SDK's private virtual environment.

A system is a server command line plus the interpreter that runs its own client. The
official SDK lives in bench/.venv-official (created here on first use), so the benchmark
measures the released package, not whatever the dev venv happens to hold.
"""

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SERVERS = BENCH / "servers"
OFFICIAL_VENV = BENCH / ".venv-official"
OFFICIAL_REQUIREMENT = "mcp==2.3.0"
OFFICIAL_VERSION = OFFICIAL_REQUIREMENT.split("==")[1]
# uvicorn's C HTTP parser, which the HTTP servers (W6-W8) use for every system; the same version
# as mcpkit[http] puts in the dev venv
HTTPTOOLS_REQUIREMENT = "httptools==0.9.0"
# JWT verification in the official SDK's protected server (bench/auth_cost.py): the same PyJWT
# as mcpkit[auth] puts in the dev venv
PYJWT_REQUIREMENT = "PyJWT[crypto]==2.15.1"
NAMES = ("mcpkit", "official", "raw")


# The server file of each workload, per system: W4 and W5 need tools the echo server lacks
# (and pydantic, which would change the echo server's W3 start time and RSS).
SERVER_FILES = {"W4": "{}_order.py", "W5": "{}_tools100.py"}
DEFAULT_SERVER_FILE = "{}_server.py"


@dataclass(frozen=True)
class System:
    name: str
    server_python: str  # interpreter that runs this system's servers
    client_python: str  # interpreter that runs this system's own client (bench/e2e.py)
    unavailable: str | None = None  # why it cannot run, if it cannot

    def server_argv(self, workload: str = "W1") -> tuple[str, ...]:
        """The command line of this system's server for `workload`."""
        file = SERVER_FILES.get(workload, DEFAULT_SERVER_FILE).format(self.name)
        return (self.server_python, str(SERVERS / file))


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def ensure_official_venv(log=print) -> Path:
    """bench/.venv-official/bin/python with mcp==2.3.0 (httptools, PyJWT) in it; create or repair
    it if needed."""
    python = OFFICIAL_VENV / "bin" / "python"
    probe = [
        str(python),
        "-c",
        "import importlib.metadata as m, httptools, jwt; print(m.version('mcp'))",
    ]
    if python.exists() and _run(probe).stdout.strip() == OFFICIAL_VERSION:
        return python
    log(f"setting up {OFFICIAL_VENV.relative_to(BENCH.parent)} with {OFFICIAL_REQUIREMENT} ...")
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(OFFICIAL_VENV)], check=True)
    pip = [
        str(python),
        "-m",
        "pip",
        "install",
        "--quiet",
        OFFICIAL_REQUIREMENT,
        HTTPTOOLS_REQUIREMENT,
        PYJWT_REQUIREMENT,
    ]
    subprocess.run(pip, check=True)
    return python


def mcpkit_problem() -> str | None:
    """None if this venv's mcpkit has the public Server/Client API, else the reason."""
    check = _run([sys.executable, "-c", "from mcpkit import Server, Client"])
    return None if check.returncode == 0 else _last_line(check.stderr)


def build(names: tuple[str, ...] = NAMES, log=print) -> list[System]:
    systems = []
    for name in names:
        if name == "official":
            python = str(ensure_official_venv(log))
            systems.append(System(name, python, python))
        elif name == "mcpkit":
            systems.append(System(name, sys.executable, sys.executable, mcpkit_problem()))
        elif name == "raw":
            systems.append(System(name, sys.executable, sys.executable))
        else:
            raise ValueError(f"unknown system {name!r}")
    return systems
