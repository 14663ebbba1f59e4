"""Import cost: `import mcpkit` never loads the authorization server, and the server's public
names load no JOSE library, no HTTP client and no database driver until they are used."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("jwt", "cryptography", "httpx", "uvicorn", "sqlite3", "pydantic")


def loaded_after(statement: str, candidates: tuple[str, ...]) -> list[str]:
    code = f"import sys; {statement}; print([m for m in {candidates!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(eval(out.stdout))  # a printed list of module names


def test_import_mcpkit_loads_nothing_of_the_authorization_server() -> None:
    found = loaded_after("import mcpkit", ("mcpkit.auth", "mcpkit.auth.server", *HEAVY))
    assert found == []


def test_the_server_s_names_load_no_jose_http_or_database_library() -> None:
    statement = (
        "from mcpkit.auth.server import AuthorizationServer, AuthServerOptions, "
        "ClientConfig, CIMDOptions, PasswordUsers, MemoryAuthStore, LoginAttempt"
    )
    assert loaded_after(statement, (*HEAVY, "mcpkit.protocol", "mcpkit.runtime")) == []
