"""The fake Anthropic/OpenAI API (tests/host/fake_llm.py) as a process, for the docs' blocks:
every request gets a short text answer ("Hello!") in the API's own format, since a doc's
program cannot script replies.

    python -m tests.docs.llm_server PORT
"""

from __future__ import annotations

import sys

import uvicorn

from tests.host.fake_llm import FakeLLM, Reply, anthropic_message, openai_completion


class AlwaysHello(FakeLLM):
    def _next(self, method: str, path: str) -> Reply:
        if path == "/v1/messages":
            return anthropic_message([{"type": "text", "text": "Hello!"}])
        if path == "/v1/chat/completions":
            return openai_completion("Hello!")
        return super()._next(method, path)


if __name__ == "__main__":
    uvicorn.run(AlwaysHello(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
