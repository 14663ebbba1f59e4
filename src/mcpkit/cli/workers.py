"""`mcpkit run APP --transport http --redis URL [--workers N]`: one service on N processes.

uvicorn starts N worker processes on one port, and each imports its app by name: `app()`
here, a factory that loads the server named by the command line and gives it a `RedisState`,
so every worker shares sessions and stream events through Redis (docs/scale-out.md). What
the command line said reaches the workers in environment variables (they are new
interpreters), read once by the factory; so does the rest of the environment, among it
`$MCPKIT_REQUEST_STATE_KEYS`, the requestState sealing keys every worker must share (there is
no command-line option for them: a secret in the arguments is visible to every local user).
"""

from __future__ import annotations

import os
from typing import Any

from mcpkit._extras import optional_dependency

_APP, _REDIS, _HOST = "MCPKIT_WORKER_APP", "MCPKIT_WORKER_REDIS", "MCPKIT_WORKER_HOST"


def serve(spec: str, *, host: str, port: int, redis: str, workers: int) -> None:
    """Serve `spec` (FILE[:OBJ] or MODULE[:OBJ]) on `workers` processes sharing `redis`.
    Raises ImportError naming the extra when uvicorn or redis is missing, and what
    `Server.http_app` raises (ValueError without requestState sealing keys)."""
    with optional_dependency():  # uvicorn: the 'http' extra
        import uvicorn
    location, colon, name = spec.partition(":")
    if os.path.exists(location):  # a file: the same one whatever a worker's directory
        spec = os.path.abspath(location) + colon + name
    os.environ.update({_APP: spec, _REDIS: redis, _HOST: host})
    # Made once here first: a configuration error (no sealing keys, ...) stops the command
    # at once instead of each worker failing, and being restarted to fail again.
    app()
    uvicorn.run(
        "mcpkit.cli.workers:app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        lifespan="on",
    )


def app() -> Any:
    """The ASGI app of one worker (uvicorn calls this in each worker process)."""
    from mcpkit.cli.loading import load_server
    from mcpkit.transports.http.redis_state import RedisState

    server = load_server(os.environ[_APP])
    return server.http_app(state=RedisState(os.environ[_REDIS]), bind_host=os.environ[_HOST])
