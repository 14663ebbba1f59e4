"""The fuzzers' corpus: each failing input the long run finds is written to corpus/ as one JSON
file ({"target": "stdio" | "http", "input": ...}), and every file there is replayed by
test_corpus.py in every test run, so a bug once found stays found."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

CORPUS = Path(__file__).resolve().parent / "corpus"


def remember(target: str, value: Any) -> None:
    """Keep a failing input (only when asked: FUZZ_CORPUS_WRITE=1, set by scripts/fuzz.sh;
    hypothesis shrinks, so the last file written for a failure is the smallest)."""
    if os.environ.get("FUZZ_CORPUS_WRITE") != "1":
        return
    data = orjson.dumps({"target": target, "input": value}, option=orjson.OPT_INDENT_2)
    name = hashlib.sha256(data).hexdigest()[:16]
    CORPUS.mkdir(exist_ok=True)
    (CORPUS / f"{target}-{name}.json").write_bytes(data)


def entries(target: str) -> list[tuple[str, Any]]:
    return [
        (path.name, orjson.loads(path.read_bytes())["input"])
        for path in sorted(CORPUS.glob(f"{target}-*.json"))
    ]
