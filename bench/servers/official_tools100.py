"""W5 server on the official MCP Python SDK (mcp==2.3.0): 100 tools with 2-3 parameters each
(many_tools.py), registered with the tool decorator, for `tools/list`.

Run with bench/.venv-official/bin/python; speaks MCP over stdio.
"""

from many_tools import make_function, specs
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-tools100", version="1.0.0")

for name, description, kind in specs():
    server.tool(name, description=description)(make_function(kind))


if __name__ == "__main__":
    server.run()  # stdio
