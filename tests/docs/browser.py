"""The "system browser" of the docs' OAuth blocks ($BROWSER): it follows the authorization
URL's redirects as a browser would, so `OAuth()`'s default Browser approval runs as written
against examples/oauth_server.py --dev-approve (which approves at once and redirects back to
the client's loopback listener).

    python tests/docs/browser.py URL
"""

from __future__ import annotations

import sys

import httpx

if __name__ == "__main__":
    httpx.get(sys.argv[1], follow_redirects=True, timeout=30)
