"""Start a stdio server late: `python slow_start.py SECONDS SCRIPT [ARGS...]` sleeps SECONDS
before running `python SCRIPT ARGS...` in its place (a `uvx` first run, a loaded machine).

Nothing reads stdin meanwhile: what the client sends waits in the pipe, as it does for a
server that is still importing.
"""

import os
import sys
import time

time.sleep(float(sys.argv[1]))
os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
