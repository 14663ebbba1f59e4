// The mcpkit inspector's page: talks to the inspector's HTTP API (docs/inspector.md).
//
// Security: everything a server sends is data. It reaches the page only through
// textContent / createTextNode (the `el` helper below; bidi controls shown as marks, not
// applied), never innerHTML; a URL becomes a
// link only when it is http(s); images and audio are built from data: URLs this script
// makes after checking the MIME type and the base64.

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const apps = import(`./apps.js?token=${encodeURIComponent(TOKEN)}`); // MCP Apps views
const $ = (id) => document.getElementById(id);

// -- small DOM helpers (text only) ------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "on") for (const [name, fn] of Object.entries(value)) node.addEventListener(name, fn);
    else if (key in node && key !== "list") node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : textNode(String(child)));
  }
  return node;
}

// Bidi: a server's string with right-to-left letters or direction controls is isolated in a
// <bdi> (it cannot reorder the text around it), and each control (U+202E reverses all that
// follows) is shown as a mark instead of acting.
const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
const RTL = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]|\uD802[\uDC00-\uDFFF]|\uD803[\uDC00-\uDFFF]|\uD83A[\uDC00-\uDFFF]|\uD83B[\uDC00-\uDFFF]/;

function textNode(text) {
  if (!BIDI_CONTROL.test(text) && !RTL.test(text)) return document.createTextNode(text);
  const isolated = document.createElement("bdi");
  for (const part of text.split(new RegExp(`(${BIDI_CONTROL.source})`))) {
    if (!BIDI_CONTROL.test(part)) {
      if (part) isolated.append(part);
      continue;
    }
    const code = `U+${part.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    const mark = document.createElement("span");
    mark.className = "bidi-mark";
    mark.title = `a text direction control (${code}), shown instead of applied`;
    mark.textContent = code;
    isolated.append(mark);
  }
  return isolated;
}

function clear(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null));
  return node;
}

function isWebURL(url) {
  return typeof url === "string" && /^https?:\/\//i.test(url.trim());
}

// A link for http(s) only; anything else (javascript:, data:, file:) is shown as text.
function safeLink(url, text) {
  const label = text === undefined ? url : text;
  if (!isWebURL(url)) return el("span", { class: "uri", title: "not an http(s) URL: shown as text" }, String(url));
  return el("a", { href: url, target: "_blank", rel: "noopener noreferrer", class: "uri" }, String(label));
}

function json(value) {
  return JSON.stringify(value, null, 2);
}

function pre(text, cls) {
  return el("pre", { class: cls || "json" }, text);
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // no clipboard permission (a headless browser): the old way
    const area = el("textarea", { value: text });
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}

function copyButton(getText, label) {
  const button = el("button", { type: "button", class: "small", title: "copy to the clipboard" }, label || "Copy");
  button.addEventListener("click", async () => {
    await copyText(getText());
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = label || "Copy"; }, 1200);
  });
  return button;
}

// -- the API ------------------------------------------------------------------------------

async function api(path, body) {
  const init = { headers: { Authorization: `Bearer ${TOKEN}` } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const answer = await fetch(path, init);
  const value = await answer.json().catch(() => ({ error: `HTTP ${answer.status}` }));
  if (!answer.ok) throw new Error(typeof value.error === "string" ? value.error : `HTTP ${answer.status}`);
  return value;
}

// {"result"} or {"error"}, plus "ms"
function request(method, params) {
  return api("/api/request", { method, params: params === undefined ? null : params });
}

function errorText(error) {
  if (!error) return "";
  const code = error.code === null || error.code === undefined ? "" : ` (${error.code})`;
  return `${error.message}${code}`;
}

function errorBox(error, extra) {
  return el("div", { class: "error" }, errorText(error), error && error.data ? pre(json(error.data)) : null, extra);
}

// -- state ------------------------------------------------------------------------------

const state = { connected: false, server: null, tools: [], tasks: new Map(), watched: new Set() };
let lastConnection = null; // what the lists were loaded for

function capability(name) {
  const caps = (state.server && state.server.capabilities) || {};
  return caps[name];
}

function onState(next) {
  state.connected = Boolean(next.connected);
  state.server = next.server;
  const status = $("status");
  status.className = `status ${next.connected ? "ok" : next.error ? "bad" : ""}`;
  if (next.connected) {
    const info = (next.server && next.server.info) || {};
    // each server string a node of its own (isolated by `el` when it needs it)
    clear(status, el("span", {}, "connected: ", info.name || "?", " ", info.version || "", " (", next.server.era, ", ",
      next.server.protocolVersion, ")"), restartNote(next));
  } else {
    clear(status, el("span", {}, next.error ? "not connected: " : "not connected", next.error || null), restartNote(next));
  }
  if (next.target && !$("target").value) $("target").value = next.target;
  if (next.mode) $("mode").value = next.mode === "legacy" ? "handshake" : next.mode; // the old name
  $("disconnect").disabled = !next.connected;
  renderServer();
  const key = next.connected ? `${next.connection}|${next.target}|${next.mode}` : null; // each connection anew
  if (key !== lastConnection) {
    lastConnection = key;
    clearLists(next.connected ? "Choose one." : "Not connected.");
    if (next.connected) loadLists();
    if (next.reason) logLine("notice", "inspector", next.connected ? `${next.reason}; lists reloaded` : `${next.reason}; it did not start`);
  } else if (next.connected && next.server) {
    renderServer();
  }
}

// Why the program connected again (mcpkit dev: a file changed), and when.
function restartNote(next) {
  if (!next.reason) return null;
  return el("span", { class: "restart", title: "the inspector connected again by itself" },
    ` · ${next.reason} at ${new Date().toLocaleTimeString()}`);
}

function loadLists() {
  loadTools();
  loadResources();
  loadPrompts();
  if (capability("tasks")) loadTasks();
}

// A new connection (or none): nothing of the previous server stays on show.
function clearLists(note) {
  state.watched.clear();
  state.tasks.clear();
  state.shownTool = null;
  for (const id of ["tool-list", "resource-list", "template-list", "prompt-list", "task-rows", "task-view"]) clear($(id));
  for (const id of ["tool-view", "resource-view", "prompt-view"]) clear($(id), el("p", { class: "empty" }, note));
  delete $("tool-view").dataset.tool;
}

// -- tabs -------------------------------------------------------------------------------

function showPanel(name) {
  for (const tab of document.querySelectorAll("#tabs [role=tab]")) {
    const on = tab.dataset.panel === name;
    tab.setAttribute("aria-selected", String(on));
    $(`panel-${tab.dataset.panel}`).hidden = !on;
  }
  if (name === "log") $("log-count").textContent = "";
}

// -- connect bar --------------------------------------------------------------------------

async function connect(event) {
  event.preventDefault();
  const button = $("connect");
  button.disabled = true;
  $("status").textContent = "connecting…";
  $("status").className = "status";
  try {
    onState(await api("/api/connect", { target: $("target").value.trim(), mode: $("mode").value }));
  } catch (error) {
    onState({ connected: false, error: error.message });
  } finally {
    button.disabled = false;
  }
}

async function disconnect() {
  onState(await api("/api/disconnect", {}));
}

// -- server panel -------------------------------------------------------------------------

function definitionList(entries) {
  const list = el("dl", { class: "facts" });
  for (const [term, value] of entries) {
    if (value === undefined || value === null || value === "") continue;
    list.append(el("dt", {}, term), el("dd", {}, value instanceof Node ? value : String(value)));
  }
  return list;
}

function renderServer() {
  const view = $("server-view");
  const panel = $("panel-server");
  panel.querySelector(".empty").hidden = Boolean(state.server);
  if (!state.server) return clear(view);
  const server = state.server;
  const info = server.info || {};
  const headers = Object.entries(server.headers || {});
  clear(
    view,
    el("h2", {}, info.title || info.name || "server"),
    definitionList([
      ["Name", info.name],
      ["Version", info.version],
      ["Title", info.title],
      ["Website", info.websiteUrl ? safeLink(info.websiteUrl) : null],
      ["Era", server.era],
      ["Protocol version", server.protocolVersion],
    ]),
    el("h3", {}, "Instructions"),
    server.instructions ? pre(server.instructions, "text") : el("p", { class: "empty" }, "none"),
    el("h3", {}, "Capabilities"),
    pre(json(server.capabilities || {})),
    el("h3", {}, "Mcp-* headers"),
    headers.length
      ? el("table", { class: "grid" }, headers.map(([name, value]) => el("tr", {}, el("th", {}, name), el("td", {}, value))))
      : el("p", { class: "empty" }, "none (stdio, or no HTTP exchange yet)"),
  );
}

// -- forms from JSON Schema ---------------------------------------------------------------

// Resolve a local $ref and the Optional[...] shape (anyOf with null) to the schema to edit.
function resolve(schema, root) {
  let current = schema || {};
  for (let depth = 0; depth < 10; depth++) {
    if (typeof current.$ref === "string" && current.$ref.startsWith("#/")) {
      let target = root;
      for (const part of current.$ref.slice(2).split("/")) target = target ? target[part] : undefined;
      if (!target) break;
      current = { ...target, ...withoutKey(current, "$ref") };
      continue;
    }
    const variants = current.anyOf || current.oneOf;
    if (Array.isArray(variants) && variants.length && variants.every((v) => v && v.const !== undefined)) {
      // titled choices ({const, title} each): a select showing the titles
      const rest = withoutKey(withoutKey(current, "anyOf"), "oneOf");
      return { ...rest, enum: variants.map((v) => v.const), enumNames: variants.map((v) => v.title || String(v.const)) };
    }
    if (Array.isArray(variants)) {
      const real = variants.filter((v) => v && v.type !== "null");
      if (real.length === 1) {
        current = { ...real[0], ...withoutKey(withoutKey(current, "anyOf"), "oneOf") };
        continue;
      }
    }
    break;
  }
  return current;
}

function withoutKey(object, key) {
  const copy = { ...object };
  delete copy[key];
  return copy;
}

function schemaType(schema) {
  if (Array.isArray(schema.enum)) return "enum";
  if (schema.const !== undefined) return "const";
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null");
  if (!type && schema.properties) return "object";
  return type || "json";
}

// A field: {node, get()} where get() returns the value or undefined for "not given".
// `trail`: the $refs being expanded above it; one met again (a recursive schema, such as a
// tree's Node holding an Optional Node) is expanded only on demand, one level a click.
function field(name, schema, root, required, initial, trail = new Set(), eager = false) {
  const ref = refOf(schema);
  if (ref && trail.has(ref) && !eager) return lazyField(name, schema, root, required, initial, trail);
  const inner = ref ? new Set([...trail, ref]) : trail;
  const s = resolve(schema, root);
  const value = initial !== undefined ? initial : s.default;
  const label = fieldLabel(name, schema, required);
  const help = s.description ? el("small", { class: "help" }, s.description) : null;
  const type = schemaType(s);
  const editor = editorFor(type, s, root, value, required, inner);
  if (editor.input) editor.input.name = name;
  const wrapper = type === "object" || type === "array"
    ? el("fieldset", { class: "field nested" }, el("legend", {}, label), help, editor.node)
    : el("label", { class: "field" }, label, editor.node, help);
  return { node: wrapper, get: editor.get, input: editor.input };
}

// The schema's own title when it has one (the key beside it), else the key.
function fieldLabel(name, schema, required) {
  const title = schema && typeof schema.title === "string" && schema.title.trim() ? schema.title : null;
  return el("span", { class: "field-name" }, title || name,
    title && title !== name ? el("code", { class: "field-key" }, name) : null,
    required ? el("span", { class: "required", title: "required" }, " *") : null);
}

// The local $ref a schema stands for, directly or as the one real choice of an Optional.
function refOf(schema) {
  if (!schema || typeof schema !== "object") return null;
  if (typeof schema.$ref === "string") return schema.$ref;
  const variants = schema.anyOf || schema.oneOf;
  if (!Array.isArray(variants)) return null;
  const refs = variants.filter((v) => v && typeof v.$ref === "string");
  return refs.length === 1 ? refs[0].$ref : null;
}

function lazyField(name, schema, root, required, initial, trail) {
  const node = el("div", { class: "field recursive" });
  let shown = null;
  const note = el("small", { class: "help" }, `${refName(refOf(schema))} again (recursive): set it to fill it in`);
  const set = el("button", { type: "button", class: "small expand" }, `Set ${name}`);
  const unset = el("button", { type: "button", class: "small unset", title: "leave it out" }, `Unset ${name}`);
  const collapse = () => { shown = null; clear(node, fieldLabel(name, schema, required), note, set); };
  const expand = (value) => {
    shown = field(name, schema, root, required, value, trail, true);
    clear(node, shown.node, unset);
  };
  set.addEventListener("click", () => expand(undefined));
  unset.addEventListener("click", collapse);
  if (initial !== undefined && initial !== null) expand(initial);
  else collapse();
  return { node, get: () => (shown ? shown.get() : undefined) };
}

function refName(ref) {
  return String(ref).split("/").pop();
}

function editorFor(type, s, root, value, required, trail) {
  switch (type) {
    case "enum": return enumEditor(s, value, required);
    case "const": return { node: el("code", {}, JSON.stringify(s.const)), get: () => s.const };
    case "boolean": return booleanEditor(value, required);
    case "integer":
    case "number": return numberEditor(type, s, value);
    case "string": return stringEditor(s, value);
    case "array": return arrayEditor(s, root, value, trail);
    case "object": return s.properties ? objectEditor(s, root, value, trail) : jsonEditor(value);
    default: return jsonEditor(value);
  }
}

function enumEditor(s, value, required) {
  const names = Array.isArray(s.enumNames) ? s.enumNames : [];
  const select = el("select", {}, required ? null : el("option", { value: "" }, "—"),
    s.enum.map((option, i) => el("option", { value: String(i) }, names[i] !== undefined ? names[i] : String(option))));
  const index = s.enum.findIndex((option) => option === value);
  select.value = index >= 0 ? String(index) : required ? "0" : "";
  return { node: select, input: select, get: () => (select.value === "" ? undefined : s.enum[Number(select.value)]) };
}

function booleanEditor(value, required) {
  const box = el("input", { type: "checkbox", checked: value === true });
  let touched = value !== undefined || required; // a required box left unticked means false
  box.addEventListener("change", () => { touched = true; });
  return { node: box, input: box, get: () => (touched ? box.checked : undefined) };
}

function numberEditor(type, s, value) {
  const input = el("input", { type: "number", step: type === "integer" ? "1" : "any", value: value === undefined ? "" : String(value),
    min: s.minimum, max: s.maximum });
  return { node: input, input, get: () => (input.value.trim() === "" ? undefined : Number(input.value)) };
}

function stringEditor(s, value) {
  const long = (s.maxLength || 0) > 200 || s.format === "textarea";
  const input = long ? el("textarea", { rows: 3 }) : el("input", { type: inputType(s.format) });
  input.value = value === undefined ? "" : String(value);
  return { node: input, input, get: () => (input.value === "" ? undefined : input.value) };
}

function inputType(format) {
  return { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[format] || "text";
}

function arrayEditor(s, root, value, trail) {
  const items = [];
  const list = el("ol", { class: "array-items" });
  const add = (initial) => {
    const item = field(`item ${items.length + 1}`, s.items || {}, root, true, initial, trail);
    const remove = el("button", { type: "button", class: "small", title: "remove this item" }, "Remove");
    const row = el("li", {}, item.node, remove);
    const entry = { item, row };
    remove.addEventListener("click", () => {
      items.splice(items.indexOf(entry), 1);
      row.remove();
    });
    items.push(entry);
    list.append(row);
  };
  for (const initial of Array.isArray(value) ? value : []) add(initial);
  const addButton = el("button", { type: "button", class: "small add" }, "Add item");
  addButton.addEventListener("click", () => add(undefined));
  return {
    node: el("div", {}, list, addButton),
    get: () => {
      const values = items.map((entry) => entry.item.get());
      return values.length ? values.map((v) => (v === undefined ? null : v)) : value === undefined ? undefined : [];
    },
  };
}

function objectEditor(s, root, value, trail) {
  const fields = objectFields(s, root, value || {}, trail);
  return { node: el("div", { class: "fields" }, fields.map(([, f]) => f.node)), get: () => collect(fields) };
}

function objectFields(s, root, value, trail) {
  const required = new Set(s.required || []);
  return Object.entries(s.properties || {}).map(([name, sub]) => [name, field(name, sub, root, required.has(name), value[name], trail)]);
}

function collect(fields) {
  const result = {};
  for (const [name, f] of fields) {
    const value = f.get();
    if (value !== undefined) result[name] = value;
  }
  return result;
}

function jsonEditor(value) {
  const area = el("textarea", { rows: 3, class: "code", placeholder: "JSON" });
  area.value = value === undefined ? "" : JSON.stringify(value);
  return { node: area, input: area, get: () => (area.value.trim() === "" ? undefined : JSON.parse(area.value)) };
}

// A form for an object schema, with a raw-JSON switch. {node, value()}; value() throws on bad JSON.
function schemaForm(schema, root) {
  const body = el("div", { class: "fields" });
  const raw = el("textarea", { rows: 8, class: "code raw-json", hidden: true });
  const toggle = el("input", { type: "checkbox", class: "raw-switch" });
  let fields = [];
  const build = (initial) => {
    fields = objectFields(schema || {}, root || schema, initial || {});
    clear(body, fields.map(([, f]) => f.node));
    if (!fields.length) body.append(el("p", { class: "empty" }, "No arguments."));
  };
  const problem = el("p", { class: "error", hidden: true });
  try {
    build(undefined);
  } catch (error) { // a schema the form cannot show: the arguments as JSON still can be given
    fields = [];
    toggle.checked = true;
    raw.value = "{}";
    [raw.hidden, body.hidden, problem.hidden] = [false, true, false];
    problem.textContent = `This schema cannot be shown as a form (${error.message}): give the arguments as JSON.`;
  }
  toggle.addEventListener("change", () => {
    problem.hidden = true;
    try {
      if (toggle.checked) raw.value = json(collect(fields));
      else build(JSON.parse(raw.value || "{}"));
    } catch (error) {
      toggle.checked = !toggle.checked; // stay where the text can be fixed
      problem.textContent = `Not valid: ${error.message}`;
      problem.hidden = false;
      return;
    }
    raw.hidden = !toggle.checked;
    body.hidden = toggle.checked;
  });
  return {
    node: el("div", { class: "schema-form" }, el("label", { class: "switch" }, toggle, " raw JSON"), problem, body, raw),
    value: () => (toggle.checked ? JSON.parse(raw.value || "{}") : collect(fields)),
  };
}

// -- a small JSON Schema check (for structuredContent against outputSchema) ---------------

function check(schema, value, root, path, problems) {
  const s = resolve(schema, root);
  const where = path || "(root)";
  if (Array.isArray(s.enum) && !s.enum.some((v) => JSON.stringify(v) === JSON.stringify(value))) {
    problems.push(`${where}: not one of ${JSON.stringify(s.enum)}`);
  }
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length && !types.some((t) => hasType(t, value))) {
    problems.push(`${where}: expected ${types.join(" or ")}, got ${kind(value)}`);
    return problems;
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const name of s.required || []) if (!(name in value)) problems.push(`${where}: missing "${name}"`);
    for (const [name, sub] of Object.entries(s.properties || {})) {
      if (name in value) check(sub, value[name], root, `${path}.${name}`, problems);
    }
    if (s.additionalProperties === false) {
      for (const name of Object.keys(value)) if (!(name in (s.properties || {}))) problems.push(`${where}: unexpected "${name}"`);
    }
  }
  if (Array.isArray(value) && s.items) value.forEach((item, i) => check(s.items, item, root, `${path}[${i}]`, problems));
  return problems;
}

function kind(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (Number.isInteger(value)) return "integer";
  return typeof value;
}

function hasType(type, value) {
  const actual = kind(value);
  if (type === "number") return actual === "number" || actual === "integer";
  return actual === type;
}

// -- content blocks ---------------------------------------------------------------------------

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function dataURL(mime, data, family) {
  if (typeof mime !== "string" || typeof data !== "string") return null;
  const compact = data.replace(/\s+/g, ""); // some servers wrap their base64
  if (!new RegExp(`^${family}/[A-Za-z0-9.+-]+$`).test(mime) || !BASE64.test(compact)) return null;
  return `data:${mime};base64,${compact}`;
}

function renderContent(block) {
  if (!block || typeof block !== "object") return pre(json(block));
  switch (block.type) {
    case "text": return el("div", { class: "block text" }, pre(String(block.text), "text"));
    case "image": return mediaBlock(block, "image", (src) => el("img", { src, alt: `image (${block.mimeType})` }));
    case "audio": return mediaBlock(block, "audio", (src) => el("audio", { src, controls: true }));
    case "resource_link": return el("div", { class: "block link" }, el("span", { class: "tag" }, "resource link"),
      el("strong", {}, block.title || block.name || ""), " ", safeLink(block.uri), block.mimeType ? ` (${block.mimeType})` : null,
      block.description ? el("p", {}, block.description) : null);
    case "resource": return embedded(block.resource || {});
    default: return el("div", { class: "block" }, el("span", { class: "tag" }, String(block.type)), pre(json(block)));
  }
}

function mediaBlock(block, family, make) {
  const src = dataURL(block.mimeType, block.data, family);
  return el("div", { class: `block ${family}` }, el("span", { class: "tag" }, `${family} ${block.mimeType || ""}`),
    src ? make(src) : el("span", { class: "error" }, `not a valid ${family}`));
}

function embedded(resource) {
  let body;
  if (typeof resource.text === "string") body = pre(resource.text, "text");
  else if (typeof resource.blob === "string") {
    const image = dataURL(resource.mimeType, resource.blob, "image");
    body = image ? el("img", { src: image, alt: resource.uri }) : el("p", {}, `binary, ${Math.floor(resource.blob.length * 0.75)} bytes`);
  }
  return el("div", { class: "block resource" }, el("span", { class: "tag" }, "resource"), " ", safeLink(resource.uri),
    resource.mimeType ? ` (${resource.mimeType})` : null, body);
}

function renderCallResult(result, outputSchema) {
  const parts = [];
  if (result.isError) parts.push(el("p", { class: "error" }, "The tool reports an error (isError)."));
  for (const block of result.content || []) parts.push(renderContent(block));
  if (result.structuredContent !== undefined) {
    const problems = outputSchema ? check(outputSchema, result.structuredContent, outputSchema, "", []) : null;
    const verdict = !outputSchema
      ? el("p", { class: "empty" }, "No outputSchema.")
      : problems.length
        ? el("div", { class: "error" }, "Does not match the outputSchema:", el("ul", {}, problems.map((p) => el("li", {}, p))))
        : el("p", { class: "ok" }, "Matches the outputSchema.");
    parts.push(el("div", { class: "structured" },
      el("div", {}, el("h4", {}, "structuredContent"), pre(json(result.structuredContent))),
      el("div", {}, el("h4", {}, "outputSchema check"), verdict, outputSchema ? el("details", {}, el("summary", {}, "schema"), pre(json(outputSchema))) : null)));
  }
  return el("div", { class: "result" }, parts);
}

// Other SDKs' servers send elicitation, sampling and roots requests only in the handshake
// era: at 2026-07-28 they fail with these words (the official SDK's "no back-channel",
// FastMCP's "unavailable on 2026-07-28 connections"). Say which mode works, offer it.
const NO_BACK_CHANNEL = /no back-channel|server-initiated requests?.{0,40}unavailable/i;

function eraHint(answer) {
  const failed = answer.error ? [errorText(answer.error)]
    : answer.result && answer.result.isError ? (answer.result.content || []).map((block) => String(block.text || "")) : [];
  const era = state.server && state.server.era;
  if (era !== "per-request" || !failed.some((text) => NO_BACK_CHANNEL.test(text))) return null;
  const reconnect = () => { $("mode").value = "handshake"; $("connect-form").requestSubmit(); };
  return el("div", { class: "hint era-hint" },
    el("p", {}, "This server cannot send its requests (elicitation, sampling, roots) in the 2026-07-28 era, ",
      $("mode").value === "auto" ? "which auto mode chose" : "the mode chosen",
      ": it sends them in the handshake era (2025-11-25), where the page answers them."),
    el("button", { type: "button", class: "reconnect-handshake primary", on: { click: reconnect } }, "Reconnect in handshake mode"));
}

function timing(answer) {
  return el("small", { class: "timing" }, `${answer.ms} ms`);
}

// -- tools --------------------------------------------------------------------------------

async function loadTools() {
  if (!capability("tools")) return clear($("tool-list"), el("li", { class: "empty" }, "The server has no tools."));
  const answer = await request("tools/list");
  if (answer.error) return clear($("tool-list"), el("li", {}, errorBox(answer.error)));
  state.tools = answer.result.tools || [];
  clear($("tool-list"), state.tools.map((tool) => {
    const item = el("li", { tabindex: 0, "data-name": tool.name, class: tool.name === state.shownTool ? "selected" : null },
      el("strong", {}, tool.title || tool.name), toolTags(tool), el("small", {}, tool.description || ""));
    item.addEventListener("click", () => showTool(tool, item));
    item.addEventListener("keydown", (e) => { if (e.key === "Enter") showTool(tool, item); });
    return item;
  }));
}

// MCP Apps marks: a tool only its view may call (visibility without "model"), a tool whose
// results render in a view (`_meta.ui.resourceUri`, or the older flat key).
function toolTags(tool) {
  const meta = (tool && tool._meta) || {};
  const ui = (meta.ui && typeof meta.ui === "object") ? meta.ui : {};
  const view = ui.resourceUri || meta["ui/resourceUri"];
  const appOnly = Array.isArray(ui.visibility) && !ui.visibility.includes("model");
  return [
    appOnly ? el("span", { class: "tag app-only", title: "visibility: app: its view calls it, no model is offered it" }, "app only") : null,
    typeof view === "string" ? el("span", { class: "tag has-view", title: `its results render in ${view}` }, "view") : null,
  ];
}

// A long text (a pasted manual, a dumped log) is clipped, with a button to show it whole.
function clipped(node, text) {
  if (String(text).length <= 600 && String(text).split("\n").length <= 8) return node;
  node.classList.add("clip");
  const more = el("button", { type: "button", class: "small more" }, "Show all");
  more.addEventListener("click", (event) => {
    event.stopPropagation();
    more.textContent = node.classList.toggle("open") ? "Show less" : "Show all";
  });
  return el("div", { class: "clipped" }, node, more);
}

function select(list, item) {
  for (const other of list.children) other.classList.toggle("selected", other === item);
}

function showTool(tool, item) {
  select($("tool-list"), item);
  state.shownTool = tool.name; // kept selected when the list reloads (list_changed)
  $("tool-view").dataset.tool = tool.name;
  const form = schemaForm(tool.inputSchema || {}, tool.inputSchema);
  const output = el("div", { class: "output" });
  const taskSupport = tool.execution && tool.execution.taskSupport;
  const asTask = el("input", { type: "checkbox", class: "as-task", checked: taskSupport === "required", disabled: taskSupport === "required" });
  const call = el("button", { type: "submit", class: "primary" }, "Call");
  const annotations = tool.annotations ? Object.entries(tool.annotations).map(([k, v]) => el("span", { class: "tag" }, `${k}: ${v}`)) : [];
  const submit = async (event) => {
    event.preventDefault();
    let args;
    try {
      args = form.value();
    } catch (error) {
      return clear(output, el("p", { class: "error" }, `Not JSON: ${error.message}`));
    }
    const params = { name: tool.name, arguments: args };
    if (asTask.checked) params.task = { ttl: 600000 };
    call.disabled = true;
    clear(output, el("p", { class: "empty" }, "calling…"));
    try {
      const answer = await request("tools/call", params);
      if (answer.error) clear(output, errorBox(answer.error), eraHint(answer), timing(answer));
      else if (asTask.checked) clear(output, taskCreated(answer.result), timing(answer));
      else {
        clear(output, renderCallResult(answer.result, tool.outputSchema), eraHint(answer), timing(answer));
        apps.then((views) => views.showView(tool, args, answer.result, output));
      }
    } finally {
      call.disabled = false;
    }
  };
  clear($("tool-view"),
    el("h2", {}, tool.title || tool.name), tool.title ? el("code", {}, tool.name) : null,
    clipped(el("p", { class: "description" }, tool.description || ""), tool.description || ""),
    el("div", { class: "tags" }, toolTags(tool), annotations),
    el("form", { class: "tool-form", on: { submit } }, form.node,
      el("div", { class: "actions" }, call,
        taskSupport && taskSupport !== "forbidden" ? el("label", {}, asTask, " run as a task") : null)),
    el("details", {}, el("summary", {}, "inputSchema"), pre(json(tool.inputSchema || {}))),
    output);
}

// -- tasks ----------------------------------------------------------------------------------

function taskCreated(result) {
  const task = result.task || result;
  rememberTask(task);
  return el("p", { class: "ok" }, "Task created: ", el("code", {}, task.taskId), ` (${task.status}); see the Tasks tab.`);
}

function rememberTask(task) {
  if (!task || typeof task.taskId !== "string") return;
  state.tasks.set(task.taskId, { ...(state.tasks.get(task.taskId) || {}), ...task });
  renderTasks();
}

async function loadTasks() {
  const answer = await request("tasks/list");
  if (answer.result) for (const task of answer.result.tasks || []) rememberTask(task);
  else if (answer.error) clear($("task-view"), errorBox(answer.error));
}

function renderTasks() {
  clear($("task-rows"), [...state.tasks.values()].map((task) => {
    const actions = el("td", { class: "row-actions" },
      el("button", { type: "button", class: "small", on: { click: () => taskGet(task.taskId) } }, "Get"),
      el("button", { type: "button", class: "small", on: { click: () => taskResult(task.taskId) } }, "Result"),
      el("button", { type: "button", class: "small", disabled: isFinal(task.status), on: { click: () => taskCancel(task.taskId) } }, "Cancel"));
    return el("tr", { "data-task": task.taskId }, el("td", {}, el("code", {}, task.taskId)),
      el("td", { class: `task-status ${task.status}` }, task.status || "?"), el("td", {}, task.statusMessage || ""),
      el("td", {}, task.lastUpdatedAt || task.createdAt || ""), actions);
  }));
}

function isFinal(status) {
  return ["completed", "failed", "cancelled"].includes(status);
}

async function taskGet(taskId) {
  const answer = await request("tasks/get", { taskId });
  if (answer.error) return clear($("task-view"), errorBox(answer.error));
  rememberTask(answer.result);
  const inline = answer.result.result; // 2026-07-28 puts the result in tasks/get
  clear($("task-view"), el("h3", {}, `Task ${taskId}`), pre(json(withoutKey(answer.result, "result"))),
    inline ? renderCallResult(inline) : null);
}

async function taskResult(taskId) {
  clear($("task-view"), el("p", { class: "empty" }, `waiting for the result of ${taskId}…`));
  const perRequest = state.server && state.server.era === "per-request";
  const answer = perRequest ? await polledResult(taskId) : await request("tasks/result", { taskId });
  if (answer.error) return clear($("task-view"), errorBox(answer.error));
  clear($("task-view"), el("h3", {}, `Result of ${taskId}`), renderCallResult(answer.result), timing(answer));
  const status = await request("tasks/get", { taskId }); // its final status, for the table
  if (status.result) rememberTask(withoutKey(status.result, "result"));
}

// 2026-07-28 has no tasks/result: tasks/get at the server's interval until the task ends,
// its result inlined then.
async function polledResult(taskId) {
  const started = performance.now();
  for (;;) {
    const answer = await request("tasks/get", { taskId });
    if (answer.error) return answer;
    rememberTask(withoutKey(answer.result, "result"));
    if (isFinal(answer.result.status)) {
      const result = answer.result.result || { content: [{ type: "text", text: `task ${answer.result.status}` }] };
      return { result, ms: Math.round(performance.now() - started) };
    }
    const wait = answer.result.pollIntervalMs || answer.result.pollInterval || 500;
    await new Promise((done) => setTimeout(done, Math.min(Math.max(wait, 50), 5000)));
  }
}

async function taskCancel(taskId) {
  const answer = await request("tasks/cancel", { taskId });
  if (answer.error) return clear($("task-view"), errorBox(answer.error));
  rememberTask(answer.result && answer.result.taskId ? answer.result : { taskId, status: "cancelled" });
}

// -- completion (completion/complete) -------------------------------------------------------

let datalists = 0;

// Suggestions from the server while typing, for a prompt's or a template's argument.
function withCompletion(input, ref, name, others) {
  if (!capability("completions") || !input) return;
  const list = el("datalist", { id: `completion-${++datalists}` });
  input.setAttribute("list", list.id);
  input.after(list);
  let timer = null;
  const ask = async () => {
    const params = { ref, argument: { name, value: input.value } };
    const context = others();
    if (Object.keys(context).length) params.context = { arguments: context };
    const answer = await request("completion/complete", params);
    const values = (answer.result && answer.result.completion && answer.result.completion.values) || [];
    clear(list, values.map((value) => el("option", { value: String(value) })));
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(ask, 200);
  });
  input.addEventListener("focus", ask, { once: true });
}

function stringArguments(fields) {
  const values = {};
  for (const [name, f] of fields) if (f.input && f.input.value) values[name] = f.input.value;
  return values;
}

// -- resources ----------------------------------------------------------------------------

async function loadResources() {
  if (!capability("resources")) {
    clear($("resource-list"), el("li", { class: "empty" }, "The server has no resources."));
    return clear($("template-list"));
  }
  const [resources, templates] = await Promise.all([request("resources/list"), request("resources/templates/list")]);
  clear($("resource-list"), resources.error ? el("li", {}, errorBox(resources.error))
    : (resources.result.resources || []).map((resource) => listItem(resource.name || resource.uri, resource.uri,
      (item) => showResource(resource, item))));
  clear($("template-list"), templates.error ? el("li", {}, errorBox(templates.error))
    : (templates.result.resourceTemplates || []).map((template) => listItem(template.name || template.uriTemplate,
      template.uriTemplate, (item) => showTemplate(template, item))));
}

function listItem(title, subtitle, open) {
  const item = el("li", { tabindex: 0 }, el("strong", {}, title), el("small", {}, subtitle));
  item.addEventListener("click", () => open(item));
  item.addEventListener("keydown", (e) => { if (e.key === "Enter") open(item); });
  return item;
}

function unselectResources(item) {
  select($("resource-list"), item);
  select($("template-list"), item);
}

function showResource(resource, item) {
  unselectResources(item);
  const output = el("div", { class: "output" });
  const read = el("button", { type: "button", class: "primary" }, "Read");
  read.addEventListener("click", () => readInto(resource.uri, output));
  clear($("resource-view"), el("h2", {}, resource.title || resource.name || resource.uri), safeLink(resource.uri),
    clipped(el("p", { class: "description" }, resource.description || ""), resource.description || ""),
    resource.mimeType ? el("p", {}, el("span", { class: "tag" }, resource.mimeType)) : null,
    el("div", { class: "actions" }, read), output);
  readInto(resource.uri, output);
}

// Read `uri` into `output`, with a Subscribe switch when the server offers subscriptions.
async function readInto(uri, output) {
  const answer = await request("resources/read", { uri });
  const canSubscribe = Boolean((capability("resources") || {}).subscribe);
  const watch = el("button", { type: "button", class: "watch" }, state.watched.has(uri) ? "Unsubscribe" : "Subscribe");
  watch.addEventListener("click", () => toggleWatch(uri, watch, output));
  const updated = output.dataset.uri === uri && state.watched.has(uri) ? el("span", { class: "tag updated" }, `updated ${new Date().toLocaleTimeString()}`) : null;
  const header = el("div", { class: "actions" }, canSubscribe ? watch : null, updated, timing(answer));
  output.dataset.uri = uri;
  if (answer.error) return clear(output, header, errorBox(answer.error));
  clear(output, header, (answer.result.contents || []).map(embedded));
}

async function toggleWatch(uri, button, output) {
  const on = state.watched.has(uri);
  const answer = await request(on ? "resources/unsubscribe" : "resources/subscribe", { uri });
  if (answer.error) return output.append(errorBox(answer.error));
  if (on) state.watched.delete(uri);
  else state.watched.add(uri);
  button.textContent = on ? "Subscribe" : "Unsubscribe";
}

function templateVariables(template) {
  const names = [];
  for (const match of template.matchAll(/\{([+#./;?&]?)([^}]+)\}/g)) {
    for (const part of match[2].split(",")) names.push({ name: part.replace(/[*]$|:\d+$/, ""), operator: match[1] });
  }
  return names;
}

// RFC 6570, the forms servers use: {x}, {+x}, {/x}, {?x,y}, {&x}, {#x}
function expandTemplate(template, values) {
  return template.replace(/\{([+#./;?&]?)([^}]+)\}/g, (_, operator, list) => {
    const names = list.split(",").map((n) => n.replace(/[*]$|:\d+$/, "")).filter((n) => values[n] !== undefined && values[n] !== "");
    const encode = operator === "+" || operator === "#" ? encodeURI : encodeURIComponent;
    if (operator === "?" || operator === "&") {
      return names.length ? operator + names.map((n) => `${n}=${encodeURIComponent(values[n])}`).join("&") : "";
    }
    const joined = names.map((n) => encode(values[n])).join(",");
    if (!joined) return "";
    return operator === "/" || operator === "." || operator === "#" ? operator + joined : joined;
  });
}

function showTemplate(template, item) {
  unselectResources(item);
  const variables = templateVariables(template.uriTemplate);
  const fields = variables.map(({ name }) => [name, field(name, { type: "string" }, {}, true)]);
  const output = el("div", { class: "output" });
  const uri = el("code", { class: "uri" });
  const values = () => Object.fromEntries(fields.map(([name, f]) => [name, f.input.value]));
  let expanded = "";
  const update = () => { // shown as any server text (isolated), read as typed
    expanded = expandTemplate(template.uriTemplate, values());
    clear(uri, textNode(expanded));
  };
  const ref = { type: "ref/resource", uri: template.uriTemplate };
  for (const [name, f] of fields) {
    f.input.addEventListener("input", update);
    withCompletion(f.input, ref, name, () => withoutKey(stringArguments(fields), name));
  }
  const submit = (event) => {
    event.preventDefault();
    readInto(expanded, output);
  };
  clear($("resource-view"), el("h2", {}, template.title || template.name || template.uriTemplate),
    el("code", {}, template.uriTemplate),
    clipped(el("p", { class: "description" }, template.description || ""), template.description || ""),
    el("form", { class: "template-form", on: { submit } }, el("div", { class: "fields" }, fields.map(([, f]) => f.node)),
      el("p", {}, "URI: ", uri), el("div", { class: "actions" }, el("button", { type: "submit", class: "primary" }, "Read"))),
    output);
  update();
}

// -- prompts --------------------------------------------------------------------------------

async function loadPrompts() {
  if (!capability("prompts")) return clear($("prompt-list"), el("li", { class: "empty" }, "The server has no prompts."));
  const answer = await request("prompts/list");
  if (answer.error) return clear($("prompt-list"), el("li", {}, errorBox(answer.error)));
  clear($("prompt-list"), (answer.result.prompts || []).map((prompt) =>
    listItem(prompt.title || prompt.name, prompt.description || "", (item) => showPrompt(prompt, item))));
}

function showPrompt(prompt, item) {
  select($("prompt-list"), item);
  const args = prompt.arguments || [];
  const fields = args.map((arg) => [arg.name, field(arg.name, { type: "string", description: arg.description }, {}, Boolean(arg.required))]);
  const ref = { type: "ref/prompt", name: prompt.name };
  for (const [name, f] of fields) withCompletion(f.input, ref, name, () => withoutKey(stringArguments(fields), name));
  const output = el("div", { class: "output" });
  const submit = async (event) => {
    event.preventDefault();
    const answer = await request("prompts/get", { name: prompt.name, arguments: stringArguments(fields) });
    if (answer.error) return clear(output, errorBox(answer.error), eraHint(answer), timing(answer));
    clear(output, answer.result.description ? el("p", {}, answer.result.description) : null,
      (answer.result.messages || []).map((message) => el("div", { class: `message ${message.role}` },
        el("span", { class: "role" }, message.role), renderContent(message.content))), timing(answer));
  };
  clear($("prompt-view"), el("h2", {}, prompt.title || prompt.name), clipped(el("p", { class: "description" }, prompt.description || ""), prompt.description || ""),
    el("form", { on: { submit } }, el("div", { class: "fields" }, fields.map(([, f]) => f.node)),
      el("div", { class: "actions" }, el("button", { type: "submit", class: "primary" }, "Get prompt"))),
    output);
}

// -- log, progress, notifications -----------------------------------------------------------

const progressBars = new Map();

function onNotification(event) {
  const params = event.params || {};
  switch (event.method) {
    case "notifications/progress": return onProgress(params);
    case "notifications/message": return logLine(params.level || "info", params.logger, params.data);
    case "notifications/tools/list_changed": logLine("notice", "list_changed", "tools changed: reloading"); return loadTools();
    case "notifications/resources/list_changed": logLine("notice", "list_changed", "resources changed: reloading"); return loadResources();
    case "notifications/prompts/list_changed": logLine("notice", "list_changed", "prompts changed: reloading"); return loadPrompts();
    case "notifications/resources/updated": return onUpdated(params.uri);
    case "notifications/tasks/status": rememberTask(params); return logLine("info", "task", `${params.taskId}: ${params.status}`);
    default: return logLine("info", event.method, params);
  }
}

function onProgress(params) {
  const token = JSON.stringify(params.progressToken);
  let entry = progressBars.get(token);
  if (!entry) {
    entry = { bar: el("progress", {}), label: el("span", {}) };
    entry.row = el("div", { class: "progress", "data-token": token }, el("small", {}, `progress ${token}`), entry.bar, entry.label);
    progressBars.set(token, entry);
    $("progress-list").prepend(entry.row);
  }
  if (typeof params.total === "number" && params.total > 0) {
    entry.bar.max = params.total;
    entry.bar.value = params.progress;
  } else {
    entry.bar.removeAttribute("value"); // unknown total: an indeterminate bar
  }
  clear(entry.label, el("span", {}, `${params.progress}${params.total ? ` / ${params.total}` : ""} `, params.message || ""));
}

function logLine(level, logger, data) {
  const text = typeof data === "string" ? data : json(data);
  const line = el("li", { class: `level-${level}` }, el("time", {}, new Date().toLocaleTimeString()),
    el("span", { class: "level" }, level), logger ? el("span", { class: "logger" }, String(logger)) : null,
    clipped(el("span", { class: "data" }, text), text));
  $("log-list").prepend(line);
  if ($("panel-log").hidden) $("log-count").textContent = String(Number($("log-count").textContent || 0) + 1);
}

function onUpdated(uri) {
  logLine("notice", "resources/updated", uri);
  const output = document.querySelector("#resource-view .output");
  if (output && output.dataset.uri === uri && state.watched.has(uri)) {
    readInto(uri, output); // watching it: show the new contents
  }
}

async function setLevel() {
  const answer = await request("logging/setLevel", { level: $("log-level").value });
  logLine(answer.error ? "error" : "info", "inspector", answer.error ? errorText(answer.error) : `level set to ${$("log-level").value}`);
}

// -- the server's requests (sampling, elicitation, roots) -------------------------------------

const asks = new Map();

function onAsk(event) {
  if (asks.has(event.id)) return;
  const box = el("article", { class: "ask", "data-ask": event.id, "data-method": event.method },
    el("h3", {}, event.method));
  const answer = async (body) => {
    for (const button of box.querySelectorAll("button")) button.disabled = true;
    try {
      await api("/api/answer", { id: event.id, ...body });
      dropAsk(event.id);
    } catch (error) {
      box.append(el("p", { class: "error" }, error.message));
    }
  };
  if (event.method === "sampling/createMessage") samplingAsk(box, event.params || {}, answer);
  else if (event.method === "elicitation/create") elicitationAsk(box, event.params || {}, answer);
  else if (event.method === "roots/list") rootsAsk(box, answer);
  else box.append(pre(json(event.params)), buttons([["Refuse", () => answer({ error: { code: -32601, message: "not supported" } })]]));
  asks.set(event.id, box);
  $("ask-list").append(box);
  $("asks").hidden = false;
}

function dropAsk(id, why) {
  const box = asks.get(id);
  if (!box) return;
  asks.delete(id);
  box.remove();
  if (why) logLine("notice", "inspector", why);
  $("asks").hidden = asks.size === 0;
}

function buttons(list) {
  return el("div", { class: "actions" }, list.map(([label, click, cls]) =>
    el("button", { type: "button", class: cls || "", on: { click } }, label)));
}

const DECLINE = { error: { code: -1, message: "The user declined the request" } };

function samplingAsk(box, params, answer) {
  const reply = el("textarea", { rows: 4, class: "answer", placeholder: "The model's answer" });
  const model = el("input", { value: "inspector (a person)", size: 24 });
  box.append(
    params.systemPrompt ? el("p", {}, el("strong", {}, "System: "), params.systemPrompt) : null,
    (params.messages || []).map((message) => el("div", { class: `message ${message.role}` },
      el("span", { class: "role" }, message.role),
      (Array.isArray(message.content) ? message.content : [message.content]).map(renderContent))),
    el("p", { class: "empty" }, `maxTokens ${params.maxTokens}`),
    el("label", { class: "field" }, el("span", { class: "field-name" }, "Answer"), reply),
    el("label", { class: "field" }, el("span", { class: "field-name" }, "Model"), model),
    buttons([
      ["Send answer", () => answer({ result: { role: "assistant", content: { type: "text", text: reply.value },
        model: model.value, stopReason: "endTurn" } }), "primary"],
      ["Refuse", () => answer(DECLINE)],
    ]));
}

function elicitationAsk(box, params, answer) {
  box.append(el("p", { class: "message-text" }, params.message || ""));
  if (params.mode === "url") {
    const url = String(params.url || "");
    box.append(el("p", {}, "The server asks you to open: ", el("code", { class: "uri" }, url)),
      isWebURL(url) ? el("p", {}, el("button", { type: "button", class: "open-url", on: { click: () => window.open(url, "_blank", "noopener,noreferrer") } }, "Open in a new tab"))
        : el("p", { class: "error" }, "Not an http(s) URL: it will not be opened."),
      buttons([["I agree (accept)", () => answer({ result: { action: "accept" } }), "primary"],
        ["Decline", () => answer({ result: { action: "decline" } })], ["Cancel", () => answer({ result: { action: "cancel" } })]]));
    return;
  }
  const schema = params.requestedSchema || { type: "object", properties: {} };
  const form = schemaForm(schema, schema);
  const problem = el("p", { class: "error", hidden: true });
  const accept = () => {
    let content;
    try {
      content = form.value();
    } catch (error) {
      problem.hidden = false;
      problem.textContent = `Not JSON: ${error.message}`;
      return;
    }
    const missing = (schema.required || []).filter((name) => content[name] === undefined);
    if (missing.length) {
      problem.hidden = false;
      problem.textContent = `Required: ${missing.join(", ")}`;
      return;
    }
    answer({ result: { action: "accept", content } });
  };
  box.append(form.node, problem, buttons([["Accept", accept, "primary"],
    ["Decline", () => answer({ result: { action: "decline" } })], ["Cancel", () => answer({ result: { action: "cancel" } })]]));
}

function rootsAsk(box, answer) {
  const area = el("textarea", { rows: 3, class: "code", placeholder: "file:///path/to/project  Name (one root a line)" });
  area.value = localStorage.getItem("mcpkit-inspector-roots") || "";
  const send = () => {
    localStorage.setItem("mcpkit-inspector-roots", area.value);
    const roots = area.value.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
      const [uri, ...name] = line.split(/\s+/);
      return name.length ? { uri, name: name.join(" ") } : { uri };
    });
    answer({ result: { roots } });
  };
  box.append(el("p", {}, "The server asks for your roots (the folders it may work in)."),
    el("label", { class: "field" }, el("span", { class: "field-name" }, "Roots"), area),
    buttons([["Send roots", send, "primary"], ["Refuse", () => answer(DECLINE)]]));
}

// -- history --------------------------------------------------------------------------------

const history = [];

const requestMethods = new Map(); // "dir id" of a request -> its method, to name its answer

function describe(event) {
  const message = event.message;
  if (!message || typeof message !== "object") return "?";
  if (Array.isArray(message)) return `batch of ${message.length}`;
  if (message.method) {
    if (message.id !== undefined) requestMethods.set(`${event.dir} ${message.id}`, message.method);
    return message.method;
  }
  const asked = requestMethods.get(`${event.dir === "send" ? "recv" : "send"} ${message.id}`);
  const prefix = asked ? `${asked} ` : "";
  if (message.error) return `${prefix}error ${message.error.code}: ${message.error.message}`;
  if ("result" in message) return `${prefix}result`;
  return "invalid";
}

function onMessage(event) {
  history.push(event);
  const row = historyRow(event);
  $("history-rows").append(row.summary, row.detail);
  event.rows = row;
  applyFilter(event);
  $("history-count").textContent = String(history.length);
}

function historyRow(event) {
  const text = json(event.message);
  const detail = el("tr", { class: "detail", hidden: true }, el("td", { colSpan: 6 }, pre(text)));
  const message = event.message || {};
  const title = describe(event);
  const summary = el("tr", { class: `msg ${event.dir}` },
    el("td", {}, typeof event.t === "number" ? event.t.toFixed(3) : ""),
    el("td", { class: "dir", title: event.dir === "send" ? "sent to the server" : "received" }, event.dir === "send" ? "→" : "←"),
    el("td", {}, title), el("td", {}, message.id === undefined ? "" : String(message.id)),
    el("td", {}, typeof event.ms === "number" ? event.ms.toFixed(1) : ""),
    el("td", {}, copyButton(() => JSON.stringify(event.message))));
  summary.addEventListener("click", (e) => {
    if (e.target.tagName !== "BUTTON") detail.hidden = !detail.hidden;
  });
  event.text = `${title}\n${text}`.toLowerCase();
  return { summary, detail };
}

function matches(event) {
  const needle = $("history-filter").value.trim().toLowerCase();
  const dir = $("history-dir").value;
  return (!dir || event.dir === dir) && (!needle || event.text.includes(needle));
}

function applyFilter(event) {
  const shown = matches(event);
  event.rows.summary.hidden = !shown;
  if (!shown) event.rows.detail.hidden = true;
}

function filterHistory() {
  for (const event of history) applyFilter(event);
}

function shownHistory() {
  return history.filter(matches).map((event) => JSON.stringify({ t: event.t, dir: event.dir, ms: event.ms, message: event.message })).join("\n");
}

// -- events ---------------------------------------------------------------------------------

function onEvent(event) {
  switch (event.type) {
    case "state": return onState(event);
    case "message": return onMessage(event);
    case "notification": return onNotification(event);
    case "ask": return onAsk(event);
    case "ask-cancelled": return dropAsk(event.id, `the server withdrew its request ${event.id}`);
    case "note": return logLine("notice", "inspector", event.text);
    default: return undefined;
  }
}

function listen() {
  const source = new EventSource(`/api/events?token=${encodeURIComponent(TOKEN)}`);
  source.addEventListener("message", (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    try {
      onEvent(event);
    } catch (error) {
      console.error("inspector: an event could not be shown", error);
    }
  });
  source.addEventListener("open", () => document.body.classList.remove("offline"));
  source.addEventListener("error", () => document.body.classList.add("offline"));
}

async function start() {
  for (const tab of document.querySelectorAll("#tabs [role=tab]")) tab.addEventListener("click", () => showPanel(tab.dataset.panel));
  $("connect-form").addEventListener("submit", connect);
  $("disconnect").addEventListener("click", disconnect);
  $("tools-refresh").addEventListener("click", loadTools);
  $("resources-refresh").addEventListener("click", loadResources);
  $("prompts-refresh").addEventListener("click", loadPrompts);
  $("tasks-refresh").addEventListener("click", loadTasks);
  $("log-level-set").addEventListener("click", setLevel);
  $("log-clear").addEventListener("click", () => { clear($("log-list")); clear($("progress-list")); progressBars.clear(); });
  $("history-filter").addEventListener("input", filterHistory);
  $("history-dir").addEventListener("change", filterHistory);
  $("history-copy").addEventListener("click", () => copyText(shownHistory()));
  $("history-download").href = `/api/history.jsonl?token=${encodeURIComponent(TOKEN)}`;
  try {
    for (const event of (await api("/api/history")).messages || []) onMessage(event);
  } catch (error) {
    $("status").textContent = `cannot reach the inspector: ${error.message}`;
  }
  listen();
  document.body.dataset.ready = "true"; // for the browser tests
}

start();
