"""`mcpkit inspect TARGET --json` (a report of a server's surface) and `--diff OLD` (what
changed since a report, for CI: exit 1 when something was removed or changed; with
`--strict`, when something was added too).

The report holds the server's info, capabilities, instructions and negotiated revision, and
every tool, resource, template and prompt with its schemas, all pages of each list. The diff
compares the surface: items by identity (a tool or prompt by name, a resource by URI, a
template by URI template) and the capabilities. Server info, instructions and the revision
are shown as notes and never fail the diff: a new version number is not a breaking change.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from mcpkit.cli.loading import UsageError
from mcpkit.cli.render import as_json
from mcpkit.host.visible import visible

JSONObject = dict[str, Any]
REPORT_FORMAT = 1
# list key -> (method, capability, identity field, a word for people)
KINDS = {
    "tools": ("tools/list", "tools", "name", "tool"),
    "resources": ("resources/list", "resources", "uri", "resource"),
    "resourceTemplates": ("resources/templates/list", "resources", "uriTemplate", "template"),
    "prompts": ("prompts/list", "prompts", "name", "prompt"),
}
EXIT_DIFFERENT = 1


async def build(client: Any, target: str) -> JSONObject:
    """The report of the connected `client`'s server (every page of every list it offers)."""
    from mcpkit.cli.commands import all_pages

    capabilities = client.server_capabilities or {}
    report: JSONObject = {
        "mcpkitReport": REPORT_FORMAT,
        "target": target,
        "server": {
            "info": client.server_info,
            "capabilities": capabilities,
            "instructions": client.instructions,
            "protocolVersion": client.protocol_version,
            "era": str(client.era),
        },
    }
    for key, (method, capability, _, _) in KINDS.items():
        offered = capability in capabilities
        report[key] = await all_pages(client, method, key) if offered else []
    return report


async def run(args: Any) -> int:
    """Print the report, or its diff against `args.diff`; the exit code."""
    from mcpkit.cli.commands import connect

    async with connect(args) as client:
        now = await build(client, args.target)
    if args.diff is None:
        as_json(now, sys.stdout)
        return 0
    old = await _old_report(args)
    changes = diff(old, now)
    if args.json:
        as_json(changes, sys.stdout)
    else:
        print_changes(changes)
    failing = changes["removed"] or changes["changed"] or (args.strict and changes["added"])
    return EXIT_DIFFERENT if failing else 0


async def _old_report(args: Any) -> JSONObject:
    """--diff OLD: a report file, or (anything else) a server to build the report of."""
    path = Path(args.diff)
    if path.suffix == ".json" and path.is_file():
        return load(path)
    from argparse import Namespace

    from mcpkit.cli.commands import connect

    other = Namespace(**{**vars(args), "target": args.diff})
    async with connect(other) as client:
        return await build(client, args.diff)


def load(path: Path) -> JSONObject:
    """A report written by `--json`. Raises UsageError for anything else."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the report {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("mcpkitReport") != REPORT_FORMAT:
        raise UsageError(f"{path} is not a report of `mcpkit inspect TARGET --json`")
    return data


def diff(old: JSONObject, new: JSONObject) -> JSONObject:
    """{"added", "removed", "changed": [{"kind", "key", "fields"?}], "notes": [str]}."""
    changes: JSONObject = {"added": [], "removed": [], "changed": [], "notes": []}
    for key, (_, _, identity, word) in KINDS.items():
        before = {str(item.get(identity)): item for item in old.get(key, [])}
        after = {str(item.get(identity)): item for item in new.get(key, [])}
        for name in sorted(after.keys() - before.keys()):
            changes["added"].append({"kind": word, "key": name})
        for name in sorted(before.keys() - after.keys()):
            changes["removed"].append({"kind": word, "key": name})
        for name in sorted(before.keys() & after.keys()):
            fields = _changed_fields(before[name], after[name])
            if fields:
                changes["changed"].append({"kind": word, "key": name, "fields": fields})
    _capabilities(old, new, changes)
    _notes(old.get("server", {}), new.get("server", {}), changes["notes"])
    return changes


def _changed_fields(before: JSONObject, after: JSONObject) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _capabilities(old: JSONObject, new: JSONObject, changes: JSONObject) -> None:
    before = old.get("server", {}).get("capabilities") or {}
    after = new.get("server", {}).get("capabilities") or {}
    for name in sorted(after.keys() - before.keys()):
        changes["added"].append({"kind": "capability", "key": name})
    for name in sorted(before.keys() - after.keys()):
        changes["removed"].append({"kind": "capability", "key": name})
    for name in sorted(before.keys() & after.keys()):
        fields = _changed_fields(before[name] or {}, after[name] or {})
        if fields:
            changes["changed"].append({"kind": "capability", "key": name, "fields": fields})


def _notes(before: JSONObject, after: JSONObject, notes: list[str]) -> None:
    old_info, new_info = before.get("info") or {}, after.get("info") or {}
    for field in ("name", "version"):
        if old_info.get(field) != new_info.get(field):
            notes.append(f"server {field}: {old_info.get(field)} -> {new_info.get(field)}")
    if before.get("protocolVersion") != after.get("protocolVersion"):
        notes.append(
            f"protocol revision: {before.get('protocolVersion')} -> {after.get('protocolVersion')}"
        )
    if before.get("instructions") != after.get("instructions"):
        notes.append("instructions changed")


def print_changes(changes: JSONObject) -> None:
    """The diff for people: `+` added, `-` removed, `~` changed (with the fields), each line
    made visible (the names are the server's)."""
    lines = [f"+ {c['kind']} {c['key']}" for c in changes["added"]]
    lines += [f"- {c['kind']} {c['key']}" for c in changes["removed"]]
    lines += [f"~ {c['kind']} {c['key']} ({', '.join(c['fields'])})" for c in changes["changed"]]
    lines += [f"  note: {note}" for note in changes["notes"]]
    print("\n".join(visible(line) for line in lines) if lines else "no differences")
