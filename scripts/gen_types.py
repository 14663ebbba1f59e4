#!/usr/bin/env python3
"""Generate `mcpkit.types` from the MCP JSON Schemas.

How this works: each revision's `schema.json` is read into a small intermediate form -- classes
(object definitions, with fields) and aliases (everything else). Inline object schemas become
classes named after their position (`Tool.inputSchema` -> `ToolInputSchema`, list items get an
`Item` suffix). The revisions are then merged into the era-neutral set: for every name, the
properties are the union over revisions, a property is required only where every revision
having the type requires it, and its type comes from the newest revision defining it. Where a
newer revision replaced an inline object by a named type (`_meta` -> `RequestMetaObject`), the
older inline class is folded into the named one so that older messages keep parsing; a
constant the newest revision dropped widens to its base type. Names that are unions in some
revision (ClientNotification) become the union of every revision's members. The method
registry comes from the ClientRequest/ServerRequest/ClientNotification/ServerNotification
unions plus the capability table below. Everything is rendered as Python source and formatted
with ruff, so running the script twice yields no diff.

    .venv/bin/python scripts/gen_types.py [--schema-dir DIR] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import shutil
import string
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
NEUTRAL_MODULE = "_neutral"
GENERATOR = "scripts/gen_types.py"

# The capability a method needs (hand-written; the schema does not say). For a request it is
# the capability the receiver must have declared; for a notification, the one its sender must
# have declared (list_changed and logging notifications are gated on the sender's own
# capabilities). `completions` exists from 2025-03-26; 2024-11-05 did not gate completion.
# Capabilities that only gate a method from some revision on.
CAPABILITY_FROM: dict[str, str] = {"completion/complete": "2025-03-26"}

CAPABILITIES: dict[str, tuple[str, ...]] = {
    "completion/complete": ("completions",),
    "elicitation/create": ("elicitation",),
    "logging/setLevel": ("logging",),
    "prompts/get": ("prompts",),
    "prompts/list": ("prompts",),
    "resources/list": ("resources",),
    "resources/read": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/templates/list": ("resources",),
    "resources/unsubscribe": ("resources", "subscribe"),
    "roots/list": ("roots",),
    "sampling/createMessage": ("sampling",),
    "tasks/cancel": ("tasks", "cancel"),
    "tasks/get": ("tasks",),
    "tasks/list": ("tasks", "list"),
    "tasks/result": ("tasks",),
    "tools/call": ("tools",),
    "tools/list": ("tools",),
    "notifications/message": ("logging",),
    "notifications/prompts/list_changed": ("prompts", "listChanged"),
    "notifications/resources/list_changed": ("resources", "listChanged"),
    "notifications/resources/updated": ("resources", "subscribe"),
    "notifications/roots/list_changed": ("roots", "listChanged"),
    "notifications/tasks/status": ("tasks",),
    "notifications/tools/list_changed": ("tools", "listChanged"),
}

# Attribute names a pydantic model (or MCPModel) already uses; a field that would shadow one
# gets a trailing underscore.
RESERVED = frozenset(
    {
        "construct",
        "copy",
        "dict",
        "fields",
        "from_orm",
        "from_wire",
        "json",
        "parse_file",
        "parse_obj",
        "parse_raw",
        "schema",
        "schema_json",
        "to_wire",
        "update_forward_refs",
        "validate",
    }
)


# --- intermediate form ----------------------------------------------------------------------


@dataclass(frozen=True)
class Ty:
    """A type expression: any, str, int, bool, number, null, lit, ref, list, dict, union."""

    kind: str
    name: str = ""
    args: tuple[Ty, ...] = ()
    values: tuple[Any, ...] = ()


ANY = Ty("any")


@dataclass
class Prop:
    wire: str
    ty: Ty
    required: bool
    doc: str


@dataclass
class ClassDef:
    name: str
    doc: str
    props: dict[str, Prop]
    synthetic: bool = False


@dataclass
class AliasDef:
    name: str
    doc: str
    ty: Ty


@dataclass
class Module:
    version: str
    classes: dict[str, ClassDef] = field(default_factory=dict)
    aliases: dict[str, AliasDef] = field(default_factory=dict)


def first_paragraph(schema: Any) -> str:
    text = schema.get("description", "") if isinstance(schema, dict) else ""
    text = re.sub(r"\{@link ([^}]*)\}", r"`\1`", text)
    return " ".join(text.strip().split("\n\n")[0].split())


def ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def pascal(wire: str) -> str:
    words = re.split(r"[^0-9A-Za-z]+", wire.rsplit("/", 1)[-1])
    return "".join(w[:1].upper() + w[1:] for w in words if w)


class SchemaReader:
    """Reads one revision's definitions into a Module."""

    def __init__(self, version: str, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.module = Module(version)

    def read(self) -> Module:
        for name, raw in self.defs.items():
            schema = self.flatten(raw)
            if schema.get("type") == "object" and schema.get("properties"):
                self.add_class(name, schema, synthetic=False)
            else:
                ty = self.convert(schema, name)
                self.module.aliases[name] = AliasDef(name, first_paragraph(schema), ty)
        return self.module

    def flatten(self, schema: Any) -> Any:
        """Merge an `allOf` of objects into one object schema."""
        if not isinstance(schema, dict) or "allOf" not in schema:
            return schema
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for ref_or_schema in schema["allOf"]:
            part = ref_or_schema
            if "$ref" in part:
                part = self.defs[ref_name(part["$ref"])]
            part = self.flatten(part)
            merged["properties"].update(part.get("properties", {}))
            required = merged["required"]
            required += [r for r in part.get("required", []) if r not in required]
        if "description" in schema:
            merged["description"] = schema["description"]
        return merged

    def add_class(self, name: str, schema: dict[str, Any], *, synthetic: bool) -> Ty:
        if name in self.module.classes or name in self.module.aliases:
            raise SystemExit(f"{self.module.version}: class name {name} is used twice")
        if synthetic and name in self.defs:
            raise SystemExit(f"{self.module.version}: inline class {name} shadows a definition")
        cls = ClassDef(name, first_paragraph(schema), {}, synthetic)
        self.module.classes[name] = cls
        required = set(schema.get("required", []))
        for wire, sub in schema["properties"].items():
            ty = self.convert(sub, name + pascal(wire))
            cls.props[wire] = Prop(wire, ty, wire in required, first_paragraph(sub))
        return Ty("ref", name)

    def convert(self, schema: Any, ctx: str) -> Ty:
        """The type of `schema`; `ctx` names any class an inline object needs."""
        if schema is True or not isinstance(schema, dict):
            ty = ANY
        elif "$ref" in schema:
            ty = Ty("ref", ref_name(schema["$ref"]))
        elif "allOf" in schema:
            ty = self.convert(self.flatten(schema), ctx)
        elif "anyOf" in schema or "oneOf" in schema:
            members = schema.get("anyOf") or schema["oneOf"]
            ty = union(self.convert(m, f"{ctx}Option{i}") for i, m in enumerate(members))
        elif "const" in schema or "enum" in schema:
            ty = Ty("lit", values=tuple(schema["enum"] if "enum" in schema else [schema["const"]]))
        else:
            ty = self.convert_typed(schema, ctx)
        return ty

    def convert_typed(self, schema: dict[str, Any], ctx: str) -> Ty:
        kind = schema.get("type")
        if isinstance(kind, list):
            return union(self.convert({**schema, "type": k}, ctx) for k in kind)
        if kind == "object":
            if schema.get("properties"):
                return self.add_class(ctx, schema, synthetic=True)
            extra = schema.get("additionalProperties", True)
            return Ty("dict", args=(self.convert(extra, ctx + "Value"),))
        if kind == "array":
            return Ty("list", args=(self.convert(schema.get("items", True), ctx + "Item"),))
        scalar = {"string": "str", "integer": "int", "boolean": "bool", "number": "number"}
        return Ty(scalar.get(kind, "null" if kind == "null" else "any"))


def union(members: Iterable[Ty]) -> Ty:
    flat: list[Ty] = []
    for m in members:
        for x in m.args if m.kind == "union" else (m,):
            if x not in flat:
                flat.append(x)
    return flat[0] if len(flat) == 1 else Ty("union", args=tuple(flat))


def refs_in(ty: Ty) -> Iterator[str]:
    if ty.kind == "ref":
        yield ty.name
    for arg in ty.args:
        yield from refs_in(arg)


def break_alias_cycles(module: Module) -> None:
    """A recursive alias (JSONValue) cannot be spelled without TypeAliasType: make it Any."""
    for alias in module.aliases.values():
        if alias.ty.kind == "union" and alias.name in alias_closure(module, alias.ty):
            alias.ty = ANY
            alias.doc = (alias.doc + " (Recursive in the schema; validated as any JSON.)").strip()


def alias_closure(module: Module, ty: Ty, seen: set[str] | None = None) -> set[str]:
    """Every name `ty` refers to, following aliases (not classes)."""
    seen = set() if seen is None else seen
    for name in refs_in(ty):
        if name not in seen:
            seen.add(name)
            if name in module.aliases:
                alias_closure(module, module.aliases[name].ty, seen)
    return seen


def load(schema_dir: Path, version: str) -> tuple[dict[str, Any], Module]:
    raw = json.loads((schema_dir / version / "schema.json").read_text(encoding="utf-8"))
    defs = raw.get("$defs") or raw["definitions"]
    module = SchemaReader(version, defs).read()
    break_alias_cycles(module)
    return defs, module


# --- the era-neutral merge ------------------------------------------------------------------


def merge(modules: list[Module]) -> Module:
    """Merge revisions (oldest first) into the era-neutral module."""
    out = Module("neutral")
    groups: dict[str, list[tuple[int, ClassDef]]] = {}
    aliases: dict[str, list[AliasDef]] = {}
    for index, module in enumerate(modules):
        for name, cls in module.classes.items():
            groups.setdefault(name, []).append((index, cls))
        for name, alias in module.aliases.items():
            aliases.setdefault(name, []).append(alias)
    for name, versions in aliases.items():
        if any(a.ty.kind in ("union", "ref") for a in versions) or name not in groups:
            out.aliases[name] = merge_alias(versions)
            groups.pop(name, None)
    while absorb_inline_classes(modules, groups, out):
        pass
    for name, contributions in groups.items():
        out.classes[name] = merge_class(name, contributions)
    prune(out, modules)
    return out


def merge_alias(versions: list[AliasDef]) -> AliasDef:
    newest = versions[-1]
    if any(a.ty.kind == "union" for a in versions):
        ty = union(a.ty for a in reversed(versions))
        return AliasDef(newest.name, newest.doc, ty)
    return newest


def merge_class(name: str, contributions: list[tuple[int, ClassDef]]) -> ClassDef:
    newest = contributions[-1][1]
    props: dict[str, Prop] = {}
    for _, cls in sorted(contributions, key=lambda c: -c[0]):
        for wire, prop in cls.props.items():
            if wire not in props:
                required = all(wire in c.props and c.props[wire].required for _, c in contributions)
                last = contributions[-1][0]
                dropped = all(wire not in c.props for i, c in contributions if i == last)
                ty = widen(prop.ty) if dropped else prop.ty
                props[wire] = Prop(wire, ty, required, prop.doc)
    return ClassDef(name, newest.doc, props, all(c.synthetic for _, c in contributions))


def widen(ty: Ty) -> Ty:
    """A constant the newest revision stopped pinning (Tool.outputSchema.type): its base type."""
    if ty.kind != "lit":
        return ty
    scalar = {bool: "bool", int: "int", float: "number", str: "str"}
    return union(Ty(scalar.get(type(v), "any")) for v in ty.values)


def absorb_inline_classes(
    modules: list[Module], groups: dict[str, list[tuple[int, ClassDef]]], out: Module
) -> bool:
    """Fold an older inline class into the named class a newer revision uses in its place."""
    changed = False
    for name, contributions in list(groups.items()):
        merged = merge_class(name, contributions)
        for index, cls in contributions:
            for wire, prop in cls.props.items():
                for new, old in paired_refs(merged.props[wire].ty, prop.ty):
                    old_cls = modules[index].classes.get(old)
                    if new == old or new not in groups or old_cls is None or not old_cls.synthetic:
                        continue
                    if (index, old_cls) not in groups[new]:
                        groups[new].append((index, old_cls))
                        groups[new].sort(key=lambda c: c[0])
                        changed = True
    return changed


def paired_refs(new: Ty, old: Ty) -> Iterator[tuple[str, str]]:
    if new.kind == old.kind == "ref":
        yield new.name, old.name
    elif new.kind == old.kind and new.kind in ("list", "dict"):
        yield from paired_refs(new.args[0], old.args[0])


def prune(out: Module, modules: list[Module]) -> None:
    """Drop inline classes nothing refers to any more (their named successor took over)."""
    named = {n for m in modules for n, c in m.classes.items() if not c.synthetic}
    roots = named | set(out.aliases)
    seen: set[str] = set()
    todo = [n for n in roots if n in out.classes or n in out.aliases]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tys = [p.ty for p in out.classes[name].props.values()] if name in out.classes else []
        if name in out.aliases:
            tys.append(out.aliases[name].ty)
        todo += [r for ty in tys for r in refs_in(ty)]
    out.classes = {n: c for n, c in out.classes.items() if n in seen}


# --- rendering ------------------------------------------------------------------------------


def py_name(wire: str, taken: set[str]) -> str:
    base = wire.rsplit("/", 1)[-1]
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", base)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower() or "field"
    if name in taken:
        name = re.sub(r"[^0-9a-zA-Z]+", "_", wire).strip("_").lower()
    if keyword.iskeyword(name) or name in RESERVED or name.startswith("model_"):
        name += "_"
    return name


def docstring(text: str, indent: int) -> list[str]:
    if not text:
        return []
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    pad = " " * indent
    lines = textwrap.wrap(text, 100 - indent - 6, break_long_words=False, break_on_hyphens=False)
    if len(lines) == 1:
        return [f'{pad}"""{lines[0]}"""']
    return [f'{pad}"""{lines[0]}', *(f"{pad}{line}" for line in lines[1:]), f'{pad}"""']


class Renderer:
    """Renders one Module as a Python source file."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.used: set[str] = set()

    def q(self, name: str) -> str:
        """A name from `typing`, qualified where the schema defines the same name (Annotated)."""
        self.used.add(name)
        if name in self.module.classes or name in self.module.aliases:
            self.used.add("typing")
            return f"typing.{name}"
        return name

    def ty(self, ty: Ty) -> str:
        """Python source for a type. A JSON number is `int | float` so that 1 stays 1."""
        simple = {"str": "str", "int": "int", "bool": "bool", "number": "int | float"}
        if ty.kind in simple:
            return simple[ty.kind]
        render = {
            "null": lambda: "None",
            "any": lambda: self.q("Any"),
            "lit": lambda: f"{self.q('Literal')}[{', '.join(json.dumps(v) for v in ty.values)}]",
            "ref": lambda: ty.name,
            "list": lambda: f"list[{self.ty(ty.args[0])}]",
            "dict": lambda: f"dict[str, {self.ty(ty.args[0])}]",
            "union": lambda: self.union(ty.args),
        }
        return render[ty.kind]()

    def union(self, members: tuple[Ty, ...]) -> str:
        tag = self.discriminator(members)
        if tag is None:  # most specific first: smart mode breaks ties by order
            members = tuple(sorted(members, key=lambda m: -self.required_count(m)))
        inner = " | ".join(self.ty(m) for m in members)
        if tag is None:
            return inner
        self.used.add("Field")
        return f'{self.q("Annotated")}[{inner}, Field(discriminator="{tag}")]'

    def required_count(self, ty: Ty) -> int:
        cls = self.module.classes.get(ty.name) if ty.kind == "ref" else None
        return sum(p.required for p in cls.props.values()) if cls else 0

    def discriminator(self, members: tuple[Ty, ...]) -> str | None:
        for tag in ("type", "method"):
            seen: set[Any] = set()
            for m in members:
                cls = self.module.classes.get(m.name) if m.kind == "ref" else None
                prop = cls.props.get(tag) if cls else None
                if prop is None or not prop.required or prop.ty.kind != "lit":
                    break
                if seen & set(prop.ty.values):
                    break
                seen |= set(prop.ty.values)
            else:
                return tag
        return None

    def field(self, prop: Prop, name: str, defined: set[str]) -> list[str]:
        ty = self.ty(prop.ty)
        alias = f'alias="{prop.wire}"' if name != prop.wire else ""
        if prop.required:
            value = f" = Field({alias})" if alias else ""
        else:
            if ty != self.q("Any") and "None" not in ty.split(" | "):
                ty += " | None"
            value = f" = Field(default=None, {alias})" if alias else " = None"
        if alias:
            self.used.add("Field")
        if not set(refs_in(prop.ty)) <= defined:  # a forward reference: pydantic resolves it later
            ty = f"'{ty}'" if '"' in ty else f'"{ty}"'
        return [f"    {name}: {ty}{value}", *docstring(prop.doc, 4)]

    def cls(self, cls: ClassDef, defined: set[str]) -> list[str]:
        lines = [f"class {cls.name}(MCPModel):", *docstring(cls.doc, 4)]
        taken: set[str] = set()
        for prop in cls.props.values():
            name = py_name(prop.wire, taken)
            taken.add(name)
            lines += self.field(prop, name, defined)
        if len(lines) == 1:
            lines.append("    pass")
        return [*lines, "", ""]

    def alias(self, alias: AliasDef) -> list[str]:
        head = f"{alias.name}: {self.q('TypeAlias')} = {self.ty(alias.ty)}"
        return [head, *docstring(alias.doc, 0), ""]

    def body(self) -> list[str]:
        """Definitions in dependency order.

        Annotations are evaluated as the classes are created (no `from __future__ import
        annotations`): pydantic then has real types in hand instead of compiling hundreds of
        strings, about a quarter less import time. Only references inside a cycle are quoted.
        """
        module = self.module
        lines: list[str] = []
        defined: set[str] = set()
        for name in dependency_order(module):
            if name in module.classes:
                lines += ["", "", *self.cls(module.classes[name], defined)]
            else:
                alias = module.aliases[name]
                if not set(refs_in(alias.ty)) <= defined:
                    raise SystemExit(f"{module.version}: alias {name} is part of a cycle")
                lines += ["", "", *self.alias(alias)]
            defined.add(name)
        return lines

    def source(self, docstring_text: str, prelude: list[str]) -> str:
        body = self.body()
        defined = set(self.module.classes) | set(self.module.aliases)
        if defined & {"Field", "MCPModel", "typing"}:
            raise SystemExit(f"{self.module.version}: a definition clashes with an import")
        names = ("Annotated", "Any", "Literal", "TypeAlias")
        typing = sorted(n for n in names if n in self.used and n not in defined)
        imports: list[str] = []
        if "typing" in self.used:
            imports += ["import typing"]
        if typing:
            imports += [f"from typing import {', '.join(typing)}", ""]
        if "Field" in self.used:
            imports += ["from pydantic import Field", ""]
        imports += ["from mcpkit.types._model import MCPModel", ""]
        head = [f'"""{docstring_text}', "", f"Generated by {GENERATOR}; do not edit.", '"""', ""]
        return "\n".join([*head, *imports, *prelude, *body]) + "\n"


def deps(alias: AliasDef) -> set[str]:
    return set(refs_in(alias.ty))


def dependency_order(module: Module) -> list[str]:
    """Every class and alias, each after what it refers to, strongly connected sets together.

    Tarjan's algorithm emits a component after everything it reaches. Inside a component the
    classes come first (their fields may refer forward), then its aliases in dependency order.
    """

    def edges(name: str) -> list[str]:
        cls = module.classes.get(name)
        tys = [p.ty for p in cls.props.values()] if cls else [module.aliases[name].ty]
        found = {r for ty in tys for r in refs_in(ty)}
        return sorted(found & (set(module.classes) | set(module.aliases)))

    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    order: list[str] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for dep in edges(name):
            if dep not in index:
                visit(dep)
                low[name] = min(low[name], low[dep])
            elif dep in stack:
                low[name] = min(low[name], index[dep])
        if low[name] == index[name]:
            component: list[str] = []
            while not component or component[-1] != name:
                component.append(stack.pop())
            classes = sorted(n for n in component if n in module.classes)
            aliases = {n: module.aliases[n] for n in component if n in module.aliases}
            order.extend([*classes, *topo_order(aliases)])

    for name in sorted([*module.aliases, *module.classes]):
        if name not in index:
            visit(name)
    return order


def topo_order(aliases: dict[str, AliasDef]) -> list[str]:
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        for dep in sorted(deps(aliases[name])):
            if dep in aliases and dep != name:
                visit(dep)
        order.append(name)

    for name in sorted(aliases):
        visit(name)
    return order


# --- the method registry --------------------------------------------------------------------


@dataclass
class Method:
    method: str
    kind: str
    senders: set[str] = field(default_factory=set)
    params_type: str | None = None
    result_type: str | None = None
    revisions: list[str] = field(default_factory=list)


def collect_methods(revisions: list[tuple[dict[str, Any], Module]]) -> dict[str, Method]:
    methods: dict[str, Method] = {}
    unions = {
        "ClientRequest": ("request", "client"),
        "ServerRequest": ("request", "server"),
        "ClientNotification": ("notification", "client"),
        "ServerNotification": ("notification", "server"),
    }
    for defs, module in revisions:
        for union_name, (kind, sender) in unions.items():
            for member, schema in union_members(defs, union_name):
                name = schema["properties"]["method"]["const"]
                info = methods.setdefault(name, Method(name, kind))
                info.senders.add(sender)
                if module.version not in info.revisions:
                    info.revisions.append(module.version)
                info.params_type = params_type(module, member)
                if kind == "request":
                    info.result_type = result_type(module, member)
    return dict(sorted(methods.items()))


def union_members(defs: dict[str, Any], name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    schema = defs.get(name)
    if schema is None:
        return
    if "anyOf" not in schema:  # a one-member union the schema collapsed into the object
        yield name, schema
        return
    for member in schema["anyOf"]:
        yield ref_name(member["$ref"]), defs[ref_name(member["$ref"])]


def params_type(module: Module, member: str) -> str | None:
    cls = module.classes[member]
    prop = cls.props.get("params")
    return prop.ty.name if prop is not None and prop.ty.kind == "ref" else None


def result_type(module: Module, member: str) -> str:
    candidate = member.removesuffix("Request") + "Result"
    known = candidate in module.classes or candidate in module.aliases
    return candidate if known else "EmptyResult"


METHODS_TEMPLATE = string.Template(
    '''"""The MCP method registry: kind, direction, types, capability and revisions of each
method (plain data, no pydantic; the server hot path reads it).

`capability` is the capability path a request's receiver must have declared, or the one
a notification's sender must have declared (`completions` is only required from
2025-03-26). `params_type` and `result_type` name types in `mcpkit.types`.

Generated by $generator; do not edit.
"""

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """What the specification says about one JSON-RPC method."""

    method: str
    kind: Literal["request", "notification"]
    direction: Literal["client_to_server", "server_to_client", "both"]
    params_type: str | None
    result_type: str | None
    capability: tuple[str, ...] | None
    revisions: frozenset[str]
    capability_from: str | None = None  # the first revision the capability gates, if not all

    def capability_at(self, version: str) -> tuple[str, ...] | None:
        """The capability `method` needs at `version` (None: nothing to declare)."""
        if self.capability_from is not None and version < self.capability_from:
            return None
        return self.capability


METHODS: dict[str, MethodInfo] = {
$entries}


def method_info(method: str) -> MethodInfo | None:
    """The registry entry for `method`; None for a method outside the specification."""
    return METHODS.get(method)
'''
)


def render_methods(methods: dict[str, Method]) -> str:
    entries = []
    for name, info in methods.items():
        if len(info.senders) == 2:
            direction = "both"
        else:
            direction = "client_to_server" if "client" in info.senders else "server_to_client"
        fields = {
            "method": name,
            "kind": info.kind,
            "direction": direction,
            "params_type": info.params_type,
            "result_type": info.result_type,
            "capability": CAPABILITIES.get(name),
        }
        args = "".join(f"{k}={v!r}, " for k, v in fields.items())
        since = CAPABILITY_FROM.get(name)
        tail = "" if since is None else f", capability_from={since!r}"
        entries.append(
            f"{name!r}: MethodInfo({args}revisions=frozenset({info.revisions!r}){tail}),\n"
        )
    return METHODS_TEMPLATE.substitute(generator=GENERATOR, entries="".join(entries))


# --- the package --------------------------------------------------------------------------

INIT_TEMPLATE = string.Template(
    '''"""MCP protocol types: the era-neutral model set, merged over every revision.

A property is required only where every revision having the type requires it, so a
message from any revision parses (a 2025-11-25 CallToolResult has no `resultType`).
Models load lazily on first attribute access, so importing this package (and the
pydantic-free `methods` and `versions` modules under it) stays cheap. Exact models per
revision: `from mcpkit.types import rev_2025_11_25`.

Generated by $generator; do not edit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.types.versions import $versions

if TYPE_CHECKING:
    from mcpkit.types._model import MCPModel
    from mcpkit.types.$neutral import $models

__all__ = $all

_MODELS = frozenset(__all__)
_REVISIONS = frozenset($revisions)
# Names until 0.1.0, still answered for one release with a DeprecationWarning.
_RENAMED = {"MODERN_VERSIONS": "PER_REQUEST_VERSIONS"}


def __getattr__(name: str) -> Any:
    """Import the models (and pydantic) on first use rather than with the package."""
    import importlib

    if name in _REVISIONS:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _RENAMED:
        from mcpkit.types.deprecation import warn_deprecated

        warn_deprecated(f"mcpkit.types.{name} is deprecated; use {_RENAMED[name]}")
        return globals()[_RENAMED[name]]
    if name not in _MODELS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    source = "_model" if name == "MCPModel" else "$neutral"
    value = getattr(importlib.import_module(f"{__name__}.{source}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
'''
)
VERSION_NAMES = (
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_PROTOCOL_VERSION",
    "PER_REQUEST_VERSIONS",
    "SUPPORTED_VERSIONS",
)


def render_init(neutral: Module) -> str:
    models = sorted([*neutral.classes, *neutral.aliases])
    return INIT_TEMPLATE.substitute(
        generator=GENERATOR,
        versions=", ".join(VERSION_NAMES),
        neutral=NEUTRAL_MODULE,
        models=f"({', '.join(models)})",
        all=repr(sorted([*models, "MCPModel", *VERSION_NAMES])),
        revisions=repr(sorted(module_name(v) for v in REVISIONS)),
    )


def module_name(version: str) -> str:
    return "rev_" + version.replace("-", "_")


def generate(schema_dir: Path) -> dict[str, str]:
    """File name -> source, for every generated module."""
    revisions = [load(schema_dir, v) for v in REVISIONS]
    files: dict[str, str] = {}
    for _, module in revisions:
        text = f"MCP protocol types of revision {module.version}, one class per definition."
        prelude = [f'PROTOCOL_VERSION = "{module.version}"', ""]
        source = Renderer(module).source(text, prelude)
        files[f"{module_name(module.version)}.py"] = source
    neutral = merge([m for _, m in revisions])
    text = "Era-neutral MCP protocol types, merged over every revision (see `__init__`)."
    files[f"{NEUTRAL_MODULE}.py"] = Renderer(neutral).source(text, [])
    files["__init__.py"] = render_init(neutral)
    files["methods.py"] = render_methods(collect_methods(revisions))
    return files


def ruff_format(paths: list[Path]) -> None:
    ruff = [sys.executable, "-m", "ruff"]
    probe = subprocess.run([*ruff, "--version"], capture_output=True, check=False)
    if probe.returncode != 0:
        found = shutil.which("ruff")
        if found is None:
            raise SystemExit("ruff is needed to format the generated code")
        ruff = [found]
    config = ["--config", str(ROOT / "pyproject.toml")]
    names = [str(p) for p in paths]
    subprocess.run([*ruff, "check", "--fix-only", "--quiet", *config, *names], check=True)
    subprocess.run([*ruff, "format", "--quiet", *config, *names], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schema-dir", type=Path, default=ROOT.parent / "shared/spec/schema")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "src/mcpkit/types")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, source in generate(args.schema_dir).items():
        path = args.out_dir / name
        path.write_text(source, encoding="utf-8")
        paths.append(path)
    ruff_format(paths)
    print(f"wrote {len(paths)} modules to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
