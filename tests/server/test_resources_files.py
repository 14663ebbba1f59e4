"""File-backed resources: what a directory serves, and every way of asking for more."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, Server
from mcpkit.errors import ProtocolError

from .test_resources import connect

SECRET = "TOP SECRET outside the root"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A served root with ordinary files, hidden ones, links in and out, and oddities;
    secrets beside it."""
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "outside_dir").mkdir()
    (tmp_path / "outside_dir" / "secret.txt").write_text(SECRET)
    (tmp_path / "root-sibling").mkdir()
    (tmp_path / "root-sibling" / "secret.txt").write_text(SECRET)
    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    (root / "README.md").write_text("# Readme\n")
    (root / "data.json").write_text('{"a": 1}')
    (root / "logo.png").write_bytes(PNG)
    (root / "Makefile").write_text("all:\n\techo hi\n")
    (root / "blob").write_bytes(b"\x00\x01\xff")
    (root / "latin.txt").write_bytes(b"caf\xe9")
    (root / "notes" / "todo.txt").write_text("- ship it\n")
    (root / "notes" / "ü b.txt").write_text("unicode name")
    (root / ".env").write_text(SECRET)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(SECRET)
    (root / "weird%41.txt").write_text("a percent in the name")
    (root / "inside_link.txt").symlink_to("README.md")
    (root / "outside_link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "relative_out.txt").symlink_to("../secret.txt")
    (root / "linked_dir").symlink_to(tmp_path / "outside_dir")
    (root / "loop").symlink_to("loop")
    os.mkfifo(root / "fifo")
    return root


def served(root: Path, **options: Any) -> Server:
    server = Server("files")
    server.add_resource(None, root, **options)
    return server


async def read(client: Client, uri: str) -> dict[str, Any]:
    [contents] = (await client.request("resources/read", {"uri": uri}))["contents"]
    return contents  # type: ignore[no-any-return]


async def refused(client: Client, uri: str, method: str = "resources/read") -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        await client.request(method, {"uri": uri})
    assert SECRET not in caught.value.message and SECRET not in str(caught.value.data)
    return caught.value


async def test_lists_and_reads_the_files_under_the_root(tree: Path) -> None:
    server = served(tree)
    prefix = tree.resolve().as_uri() + "/"
    async with Client(server) as client:
        [template] = (await client.request("resources/templates/list"))["resourceTemplates"]
        assert template == {"uriTemplate": prefix + "{+path}", "name": "root"}
        listed = (await client.request("resources/list"))["resources"]
        assert [(r["name"], r.get("mimeType"), r["size"]) for r in listed] == [
            ("Makefile", None, 14),
            ("README.md", "text/markdown", 9),
            ("blob", None, 3),
            ("data.json", "application/json", 8),
            ("inside_link.txt", "text/plain", 9),
            ("latin.txt", "text/plain", 4),
            ("logo.png", "image/png", len(PNG)),
            ("notes/todo.txt", "text/plain", 10),
            ("notes/ü b.txt", "text/plain", 12),
        ]
        assert listed[-1]["uri"] == prefix + "notes/%C3%BC%20b.txt"

        readme = await read(client, prefix + "README.md")
        assert readme == {
            "uri": prefix + "README.md",
            "mimeType": "text/markdown",
            "text": "# Readme\n",
        }
        assert (await read(client, prefix + "data.json"))["text"] == '{"a": 1}'
        logo = await read(client, prefix + "logo.png")
        assert logo["mimeType"] == "image/png" and base64.b64decode(logo["blob"]) == PNG
        make = await read(client, prefix + "Makefile")
        assert make["mimeType"] == "text/plain" and make["text"].startswith("all:")
        blob = await read(client, prefix + "blob")
        assert blob["mimeType"] == "application/octet-stream" and blob["blob"] == "AAH/"
        latin = await read(client, prefix + "latin.txt")  # not UTF-8: sent as bytes
        assert latin["mimeType"] == "text/plain" and base64.b64decode(latin["blob"]) == b"caf\xe9"
        assert (await read(client, prefix + "notes/%C3%BC%20b.txt"))["text"] == "unicode name"
        assert (await read(client, prefix + "inside_link.txt"))["text"] == "# Readme\n"
        # Files that appeared after listing are still served through the template.
        (tree / "notes" / "new.txt").write_text("fresh")
        assert (await read(client, prefix + "notes/new.txt"))["text"] == "fresh"


# The part after the prefix, and the reason (in `data`) it is refused with -32602.
EVIL = [
    ("../secret.txt", "'..'"),
    ("..%2fsecret.txt", "'..'"),
    ("..%2Fsecret.txt", "'..'"),
    ("%2e%2e/secret.txt", "'..'"),
    ("%2E%2E%2Fsecret.txt", "'..'"),
    ("%2e%2e%2f%2e%2e%2fsecret.txt", "'..'"),
    ("notes/../../secret.txt", "'..'"),
    ("notes/%2e%2e/%2e%2e/secret.txt", "'..'"),
    ("notes/..", "'..'"),
    ("..", "'..'"),
    ("./README.md", "'.'"),
    ("%252e%252e/secret.txt", "more than once"),
    ("%252e%252e%252fsecret.txt", "more than once"),
    ("..%252fsecret.txt", "more than once"),
    ("%25252e%25252e/secret.txt", "more than once"),
    ("weird%2541.txt", "more than once"),
    ("..%5csecret.txt", "backslash"),
    ("..\\secret.txt", "backslash"),
    ("notes\\..\\..\\secret.txt", "backslash"),
    ("/etc/passwd", "absolute"),
    ("%2fetc%2fpasswd", "absolute"),
    ("%2F" + "..%2F" * 8 + "etc%2Fpasswd", "absolute"),
    ("notes//todo.txt", "empty segment"),
    ("notes/", "empty segment"),
    ("README.md%00.png", "NUL"),
    ("%00", "NUL"),
    ("notes/todo.txt%00", "NUL"),
    ("%c0%ae%c0%ae/secret.txt", "UTF-8"),
    ("%e0%80%ae%e0%80%ae/secret.txt", "UTF-8"),
    ("%ff", "UTF-8"),
    (".env", "hidden"),
    ("%2eenv", "hidden"),
    (".git/config", "hidden"),
    ("outside_link.txt", "outside"),
    ("relative_out.txt", "outside"),
    ("linked_dir/secret.txt", "outside"),
    ("README.md?x=1", "query"),
    ("README.md#top", "query"),
]


@pytest.mark.parametrize(("path", "reason"), EVIL)
async def test_evil_paths_are_refused_as_invalid_params(tree: Path, path: str, reason: str) -> None:
    prefix = tree.resolve().as_uri() + "/"
    async with Client(served(tree), protocol_version="2025-06-18") as client:
        error = await refused(client, prefix + path)
        assert error.code == -32602
        assert error.data["uri"] == prefix + path
        assert reason in error.data["reason"]
        assert error.message.startswith(f"Invalid resource URI {prefix + path}: ")
        subscribe = await refused(client, prefix + path, "resources/subscribe")
        assert subscribe.code == -32602


async def test_what_is_not_a_servable_file_is_not_found(tree: Path) -> None:
    prefix = tree.resolve().as_uri() + "/"
    outside = [
        "file:///etc/passwd",
        prefix[:-1] + "-sibling/secret.txt",  # a sibling whose name starts like the root
        prefix[:-1],
        tree.parent.as_uri() + "/secret.txt",
    ]
    inside = ["", "missing.txt", "notes", "fifo", "loop", "notes/missing/deeper.txt"]
    async with Client(served(tree), protocol_version="2025-06-18") as client:
        for uri in outside + [prefix + path for path in inside]:
            error = await refused(client, uri)
            assert (error.code, error.data) == (-32002, {"uri": uri}), uri


async def test_hidden_files_on_request_and_a_size_limit(tree: Path) -> None:
    prefix = tree.resolve().as_uri() + "/"
    async with Client(served(tree, include_hidden=True)) as client:
        names = [r["name"] for r in (await client.request("resources/list"))["resources"]]
        assert ".env" in names and ".git/config" in names
        assert (await read(client, prefix + ".env"))["text"] == SECRET
        # Traversal stays refused with hidden files on.
        assert (await refused(client, prefix + "../secret.txt")).code == -32602
    async with Client(served(tree, max_bytes=9)) as client:
        error = await refused(client, prefix + "logo.png")
        assert error.code == -32603 and "larger than this server serves" in error.message
        assert (await read(client, prefix + "README.md"))["text"] == "# Readme\n"  # 9 bytes


async def test_custom_prefix_listing_off_and_refresh(tree: Path) -> None:
    server = Server("files")
    directory = server.add_resource(
        "docs://project", tree, name="project", description="The project", list_files=False
    )
    async with connect(server) as peer:
        templates = (await peer.request("resources/templates/list"))["resourceTemplates"]
        assert templates == [
            {
                "uriTemplate": "docs://project/{+path}",
                "name": "project",
                "description": "The project",
            }
        ]
        assert (await peer.request("resources/list"))["resources"] == []
        assert (await peer.read("docs://project/notes/todo.txt"))["contents"][0]["text"] == (
            "- ship it\n"
        )
        with pytest.raises(ProtocolError) as caught:
            await peer.read("docs://project/%2e%2e/secret.txt")
        assert caught.value.code == -32602

        directory.max_files = 100
        directory.refresh()  # many files, one notification
        assert [m for m, _ in await peer.settle()] == ["notifications/resources/list_changed"]
        listed = [r["uri"] for r in (await peer.request("resources/list"))["resources"]]
        assert "docs://project/notes/%C3%BC%20b.txt" in listed and len(listed) == 9

        directory.refresh()  # nothing changed: no notification
        assert await peer.settle() == []
        (tree / "notes" / "todo.txt").unlink()
        (tree / "added.md").write_text("new")
        directory.refresh()
        assert [m for m, _ in await peer.settle()] == ["notifications/resources/list_changed"]
        listed = [r["uri"] for r in (await peer.request("resources/list"))["resources"]]
        assert "docs://project/added.md" in listed
        assert "docs://project/notes/todo.txt" not in listed

        server.remove_resource("docs://project/{+path}")
        assert (await peer.request("resources/list"))["resources"] == []
        assert (await peer.request("resources/templates/list"))["resourceTemplates"] == []
        with pytest.raises(ProtocolError) as gone:
            await peer.read("docs://project/added.md")
        assert gone.value.code == -32002


def test_bad_roots_and_prefixes(tree: Path) -> None:
    server = Server("files")
    with pytest.raises(FileNotFoundError):
        server.add_resource(None, tree / "missing")
    with pytest.raises(NotADirectoryError):
        server.add_resource(None, tree / "README.md")
    with pytest.raises(ValueError):
        server.add_resource("docs://{x}/", tree)
    server.add_resource("docs://a/", tree)
    with pytest.raises(ValueError, match="already registered"):
        server.add_resource("docs://a", tree)


async def test_a_hard_link_out_of_the_root_is_served_unless_refused(tree: Path) -> None:
    # A hard link is a second name for the same file: nothing in its path leaves the root.
    os.link(tree.parent / "secret.txt", tree / "hard.txt")
    (tree / "via_symlink.txt").symlink_to("hard.txt")
    prefix = tree.resolve().as_uri() + "/"

    async with Client(served(tree)) as client:  # the default: served (docs/limits.md)
        assert (await read(client, prefix + "hard.txt"))["text"] == SECRET

    async with Client(served(tree, refuse_hard_links=True)) as client:
        listed = [r["name"] for r in (await client.request("resources/list"))["resources"]]
        assert "hard.txt" not in listed and "via_symlink.txt" not in listed
        assert "README.md" in listed
        for name in ("hard.txt", "via_symlink.txt"):  # the opened file is checked, not the link
            error = await refused(client, prefix + name)
            assert error.code == -32602
            assert error.data == {
                "uri": prefix + name,
                "reason": "the file has more than one hard link",
            }
        assert (await read(client, prefix + "README.md"))["text"] == "# Readme\n"
