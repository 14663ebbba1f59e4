"""`mcpkit run APP --transport http --redis URL [--workers N]`: one service on N processes.

N worker processes serve one port (transports/http/serving.py: each drains on SIGTERM as
one process does), and each imports its app by name: `app()` here, a factory that loads
the server named by the command line and gives it a `RedisState`, so every worker shares
sessions and stream events through Redis (docs/scale-out.md). What the command line said
reaches the workers in environment variables (they are new interpreters), read once by the
factory; so does the rest of the environment, among it `$MCPKIT_REQUEST_STATE_KEYS`, the
requestState sealing keys every worker must share (there is no command-line option for
them: a secret in the arguments is visible to every local user).
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcpkit._extras import optional_dependency
from mcpkit.cli.run_options import worker_logging, worker_setup

_APP, _REDIS, _HOST = "MCPKIT_WORKER_APP", "MCPKIT_WORKER_REDIS", "MCPKIT_WORKER_HOST"
_OPTIONS = "MCPKIT_WORKER_OPTIONS"  # http_app's keywords from the command line, and log_format


def serve(
    spec: str,
    *,
    host: str,
    port: int,
    redis: str,
    workers: int,
    options: dict[str, Any] | None = None,
) -> None:
    """Serve `spec` (FILE[:OBJ] or MODULE[:OBJ]) on `workers` processes sharing `redis`;
    `options`: `http_app`'s keywords (JSON values) and `log_format` ("json": every process's
    log lines as JSON). Raises ImportError naming the extra when uvicorn or redis is missing,
    what `Server.http_app` raises (ValueError without requestState sealing keys), and
    OSError for an address that cannot be listened on."""
    with optional_dependency():  # uvicorn: the 'http' extra
        from mcpkit.transports.http.serving import serve as serve_http
    location, colon, name = spec.partition(":")
    if os.path.exists(location):  # a file: the same one whatever a worker's directory
        spec = os.path.abspath(location) + colon + name
    options = dict(options or {})
    os.environ.update({_APP: spec, _REDIS: redis, _HOST: host, _OPTIONS: json.dumps(options)})
    # Made once here first: a configuration error (no sealing keys, ...) stops the command
    # at once instead of each worker failing, and being restarted to fail again.
    app()
    serve_http(
        "mcpkit.cli.workers:app",
        host=host,
        port=port,
        workers=workers,
        drain_timeout=options.get("drain_timeout", 5.0),
        **worker_logging(options),
    )


def app() -> Any:
    """The ASGI app of one worker (its server calls this in each worker process)."""
    from mcpkit.cli.loading import load_server
    from mcpkit.transports.http.redis_state import RedisState

    options = worker_setup(json.loads(os.environ.get(_OPTIONS) or "{}"))
    server = load_server(os.environ[_APP])
    return server.http_app(
        state=RedisState(os.environ[_REDIS]), bind_host=os.environ[_HOST], **options
    )
