#!/usr/bin/env bash
# The Debian packages the test suite drives as real parts, installed when missing:
# chromium and chromium-driver (the OAuth consent page in a real headless browser), and
# redis-server (the Redis task store and scale-out state), and haproxy and nginx-light (round
# robin in front of several workers: tests/scaleout, the configurations of examples/deploy), and
# fish (the `mcpkit completion fish` script is loaded by a real fish: tests/cli), and tmux (a real
# terminal for what the CLI shows: tests/cli/tmux.py).
# Uses sudo when not root; on a machine without apt-get it says what to install and fails.
set -euo pipefail
PACKAGES=(chromium chromium-driver redis-server haproxy nginx-light fish tmux)
COMMANDS=(chromium chromedriver redis-server haproxy nginx fish tmux)

missing=()
for i in "${!PACKAGES[@]}"; do
  command -v "${COMMANDS[$i]}" >/dev/null 2>&1 || missing+=("${PACKAGES[$i]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-packages.sh: install ${missing[*]} (Debian names) with your package manager" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
