"""`mcpkit run --log-format json`: one JSON object per log line, for a log collector.

Every line has `time` (UTC, ISO 8601 with milliseconds), `level`, `logger` and `message`,
and `exception` (the formatted traceback) when one is attached. The root logger gets the one
handler (on stderr), so mcpkit's loggers and uvicorn's (told to leave logging alone) write
through it alike.

uvicorn's access lines name the request's path without its query string, in this format as
in uvicorn's text one: the server every mcpkit command serves with trims it on the access
logger itself (`DropQuery`, transports/http/serving.py).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

__all__ = ["JSONFormatter", "configure"]


class JSONFormatter(logging.Formatter):
    """A record as one line of JSON (module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(level: int = logging.INFO) -> None:
    """Make every log line JSON on stderr from now on (replacing the root's handlers)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
