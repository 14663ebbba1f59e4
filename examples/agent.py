"""An agent over the servers of an mcp.json, in about 30 lines: the model may use every
server's tools, and asks you before each one that policy does not allow outright.

    ANTHROPIC_API_KEY=... python examples/agent.py mcp.json "What is in notes.md?"
    OPENAI_API_KEY=... OPENAI_BASE_URL=http://127.0.0.1:11434/v1 python examples/agent.py ...
"""

import asyncio
import os
import sys

from mcpkit.host import Approval, ApprovalRequest, Host, Remember
from mcpkit.host.providers import AnthropicProvider, OpenAIProvider


def approve(request: ApprovalRequest) -> Approval:
    print(f"? {request.title}  {request.details.get('arguments', '')}")
    answer = input("  allow? [y]es once / [s]ession / [n]o: ").strip().lower()
    if answer in ("y", "s"):
        return Approval(True, Remember.SESSION if answer == "s" else Remember.ONCE)
    return Approval(False)


async def main(config: str, question: str) -> None:
    model = AnthropicProvider() if os.environ.get("ANTHROPIC_API_KEY") else OpenAIProvider()
    async with Host(config, provider=model, approve=approve) as host:
        for name, status in host.servers.status().items():
            print(f"{name}: {status.state.value} {status.error or ''}")
        agent = host.agent(on_event=lambda e: e.kind == "tool_call" and print("->", e.tool))
        print(await agent.send(question))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
