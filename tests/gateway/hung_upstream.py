"""Not an MCP server: a command that hangs at start (never reads stdin, never answers).

Appends its pid to the file named by argv[1], so a test can check that none is left behind.
"""

import os
import sys
import time

with open(sys.argv[1], "a", encoding="utf-8") as file:
    file.write(f"{os.getpid()}\n")
while True:
    time.sleep(3600)
