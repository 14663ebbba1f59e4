"""Open the inspector's page in the browser without putting its token on a command line.

`webbrowser.open(url)` starts a process (the `BROWSER` command, xdg-open, the browser) with
the URL in its arguments, which any local user reads in the process list; with the token, a
local user could drive `/api/connect`, which starts commands. So the browser is given a file
instead: an HTML page in a fresh private folder (0700), readable by this user only (0600),
that redirects to the tokened URL. The file goes when the block ends.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import signal
import tempfile
import threading
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

REDIRECT = """<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url={url}"><title>mcpkit inspector</title></head>
<body><p><a href="{url}">Open the mcpkit inspector</a></p></body></html>
"""


@contextlib.contextmanager
def launcher_file(url: str) -> Iterator[Path]:
    """A file only this user can read that redirects to `url`, removed when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="mcpkit-inspector-"))  # 0700: mkdtemp's mode
    try:
        path = folder / "open.html"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(REDIRECT.format(url=html.escape(url, quote=True)))
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def opened_in_browser(url: str) -> Iterator[Path]:
    """Open `url` in the browser through `launcher_file`; the file stays for the block (the
    browser may read it late) and is removed at its end."""
    with launcher_file(url) as path:
        webbrowser.open(path.as_uri())
        yield path


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the block as Ctrl-C does (it becomes a SIGINT: asyncio.run cancels its
    task, `finally` blocks run, the launcher file is removed). uvicorn, stopping on a
    SIGTERM, sends it again to the handler it found: by default that kills the process
    before any clean-up."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are the main thread's only
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        signal.raise_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
