"""`mcpkit dev app.py`: the server under the web inspector, started again whenever a Python
file under its folder (or `--watch DIR`) changes.

The inspector's connection runs the server (a stdio subprocess, as `mcpkit inspect app.py`
does); after a change it connects again, which stops the old process and starts a new one
with the new code, and the page follows (its state event, which says why: the page reloads
its lists and shows the restart). `--no-inspector` serves the app
over Streamable HTTP on `--server-port` instead (for another client), restarted the same
way. Watching needs the `watch` extra (watchfiles).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcpkit.cli.loading import UsageError, target_for

START_TIMEOUT = 60.0  # seconds a restarted server may take to listen on a loaded machine


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C; the exit code. Raises UsageError (no such file, port taken)."""
    from mcpkit._extras import optional_dependency

    with optional_dependency():
        import watchfiles  # noqa: F401  (missing: the error names the `watch` extra)
    target_for(args.app)  # no such file: a usage error before anything starts
    folders = [Path(d) for d in args.watch] or [Path(args.app.partition(":")[0]).parent]
    for folder in folders:
        if not folder.is_dir():
            raise UsageError(f"--watch: no such folder: {folder}")
    from mcpkit.inspector.launch import terminate_as_interrupt

    main = _without_inspector(args, folders) if args.no_inspector else _with(args, folders)
    try:
        with terminate_as_interrupt():  # SIGTERM cleans up too (the browser's launcher file)
            asyncio.run(main)
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        raise UsageError(str(exc)) from None
    return 0


async def _changes(folders: list[Path]) -> AsyncIterator[list[str]]:
    """The Python files changed, one batch per burst of changes."""
    import watchfiles

    async for batch in watchfiles.awatch(*folders, watch_filter=watchfiles.PythonFilter()):
        yield sorted({path for _, path in batch})


def _say(text: str) -> None:
    print(f"mcpkit dev: {text}", flush=True)


async def _with(args: argparse.Namespace, folders: list[Path]) -> None:
    from mcpkit.inspector import Inspector
    from mcpkit.inspector.launch import opened_in_browser

    inspector = Inspector(None, resolve=target_for)
    async with inspector.serving(port=args.port) as url:
        print(f"mcpkit inspector: {url}", flush=True)
        with contextlib.ExitStack() as opened:
            if not args.no_browser:  # through a private file: no token on a command line
                opened.enter_context(opened_in_browser(url))
            await _connect(inspector, args.app, "connected to")
            async for changed in _changes(folders):
                _say(f"changed: {', '.join(changed)}")
                names = ", ".join(Path(path).name for path in changed)
                await _connect(inspector, args.app, "reconnected to", f"{names} changed: restarted")


async def _connect(inspector: Any, app: str, done: str, reason: str | None = None) -> None:
    # the page says why it reconnected and reloads its lists (the state's reason)
    state = await inspector.connection.connect(app, reason=reason)
    if state["connected"]:
        _say(f"{done} {app}")
    else:  # a syntax error, say: shown, and the next change tries again
        _say(f"{app} did not start: {state['error']}")


async def _without_inspector(args: argparse.Namespace, folders: list[Path]) -> None:
    argv = [sys.executable, "-m", "mcpkit", "run", args.app, "--transport", "http"]
    argv += ["--port", str(args.server_port)]
    url = f"http://127.0.0.1:{args.server_port}/mcp"
    process = await _start(argv, args.server_port, f"serving {args.app} on {url}")
    try:
        async for changed in _changes(folders):
            _say(f"changed: {', '.join(changed)}; restarting")
            await _stop(process)
            process = await _start(argv, args.server_port, f"serving {args.app} again")
    finally:
        await _stop(process)


async def _start(argv: list[str], port: int, ready: str) -> asyncio.subprocess.Process:
    """The server process, said ready once its port accepts (or said stopped, when it
    stops first: a syntax error, the port in use; the next change tries again)."""
    process = await asyncio.create_subprocess_exec(*argv)
    async with asyncio.timeout(START_TIMEOUT):
        while process.returncode is None:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                # Nothing tells us when uvicorn listens but the port itself: ask it again.
                await asyncio.sleep(0.05)
                continue
            writer.close()
            _say(ready)
            return process
    _say(f"the server stopped (exit code {process.returncode}); waiting for a change")
    return process


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    process.terminate()
    try:
        async with asyncio.timeout(5):
            await process.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
