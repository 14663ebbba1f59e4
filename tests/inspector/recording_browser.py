"""$BROWSER for the launcher test (test_launch.py): writes the arguments it was started with
to the file $BROWSER_ARGV (JSON, renamed into place once complete) and opens nothing; the test
opens what it was given in headless Chromium."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

if __name__ == "__main__":
    target = Path(os.environ["BROWSER_ARGV"])
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(sys.argv))
    partial.rename(target)
