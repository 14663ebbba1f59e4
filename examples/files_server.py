"""A small notes server that docs/host.md's blocks run against (its mcp.json names it "files").

    python examples/files_server.py          # stdio

Tools `read` and `delete_file` (which asks the user to confirm: a form elicitation), the
resources file:///notes.md and memo://shared, the template notes://{id} with completion of its
ids, and a `review` prompt with completion of `language`.
"""

from __future__ import annotations

from mcpkit import Context, Server

server = Server("files", version="1.0.0", instructions="Notes, read and reviewed.")
NOTES = {"notes.md": "# Notes\nBuy milk.", "alpha": "First note.", "also": "Second note."}


@server.tool(annotations={"readOnlyHint": True})
def read(path: str) -> str:
    """Read a note by its path."""
    return NOTES[path]


CONFIRM = {"type": "object", "properties": {"sure": {"type": "boolean"}}, "required": ["sure"]}


@server.tool(annotations={"destructiveHint": True})
async def delete_file(path: str, ctx: Context) -> str:
    """Delete a note, once the user confirms it."""
    answer = await ctx.elicit(f"Delete {path}?", CONFIRM)
    if answer.action != "accept" or not answer.data["sure"]:
        return f"{path} kept: the user answered {answer.action}"
    NOTES.pop(path, None)
    return f"deleted {path}"


@server.resource("file:///notes.md", mime_type="text/markdown")
def notes() -> str:
    return NOTES["notes.md"]


@server.resource("memo://shared")
def shared() -> str:
    return "A memo every server may see."


@server.resource("notes://{id}")
def note(id: str) -> str | None:
    return NOTES.get(id)


@server.completion("ref/resource", "notes://{id}")
def note_ids(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [name for name in NOTES if name.startswith(value)]


@server.prompt()
def review(code: str, language: str = "python") -> str:
    """Ask for a review of some code."""
    return f"Review this {language}:\n{code}"


@server.completion("ref/prompt", "review", "language")
def languages(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [name for name in ("python", "pyret", "rust") if name.startswith(value)]


if __name__ == "__main__":
    server.run()
