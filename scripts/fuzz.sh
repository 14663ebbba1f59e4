#!/usr/bin/env bash
# Fuzz for N minutes (default 10): the stdio byte fuzzer and the HTTP request fuzzer
# (tests/fuzz/), thousands of examples per round, a fresh seed each round. A failing input is
# written to tests/fuzz/corpus/ (the smallest one hypothesis found is the last written), and
# every test run replays the corpus from then on: commit it with the fix.
set -euo pipefail
minutes=10
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    *) echo "usage: scripts/fuzz.sh [--minutes N]" >&2; exit 2 ;;
  esac
done
BIN=${BIN:-.venv/bin}
end=$(( $(date +%s) + minutes * 60 ))
round=0
while [ "$(date +%s)" -lt "$end" ]; do
  round=$((round + 1))
  left=$(( end - $(date +%s) ))
  seed="$RANDOM$RANDOM"
  echo "fuzz: round $round, seed $seed, ${left}s left"
  status=0
  FUZZ_EXAMPLES=3000 FUZZ_CORPUS_WRITE=1 timeout "$left" "$BIN/python" -m pytest -q -x \
    tests/fuzz -k "frames or requests" -p no:cacheprovider --hypothesis-seed="$seed" || status=$?
  if [ "$status" -eq 124 ]; then
    break  # the time is up in the middle of a round: nothing failed
  elif [ "$status" -ne 0 ]; then
    echo "fuzz: failed (seed $seed); the input is in tests/fuzz/corpus/" >&2
    exit 1
  fi
done
echo "fuzz: $round rounds in $minutes minutes, nothing found"
