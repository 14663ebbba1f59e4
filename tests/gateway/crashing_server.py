"""A stdio server (mcpkit) whose `crash` tool writes a secret to stderr and exits at once."""

import os
import sys

from mcpkit import Server

server = Server("crashing")


@server.tool()
def crash() -> str:
    print("SECRET-TOKEN-123 in the crash log", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def alive() -> str:
    return f"alive {os.getpid()}"


if __name__ == "__main__":
    server.run()
