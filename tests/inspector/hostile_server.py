"""A server whose text is an attack on a page that would render it as HTML: `<script>` in its
name, description and results, a `javascript:` resource link. The inspector must hand all of
it over as data (python tests/inspector/hostile_server.py: stdio)."""

from __future__ import annotations

from mcpkit import Server

SCRIPT = "<script>document.title='owned'</script><img src=x onerror=alert(1)>"
server = Server("hostile" + SCRIPT, version="1.0.0", instructions=SCRIPT)


@server.tool(description="Echo. " + SCRIPT)
def echo(text: str) -> list[object]:
    """(description above)"""
    link = {"type": "resource_link", "uri": "javascript:alert(1)", "name": SCRIPT}
    return [SCRIPT + text, link]


if __name__ == "__main__":
    server.run()
