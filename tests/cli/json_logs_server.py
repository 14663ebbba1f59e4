"""A server whose `fail` tool logs an exception through a logger of its own."""

import logging

from mcpkit import Server

server = Server("json-logs")
logger = logging.getLogger("json_logs_server")


@server.tool()
def fail() -> str:
    try:
        raise RuntimeError("the tool broke")
    except RuntimeError:
        logger.exception("fail was called")
    return "logged"
