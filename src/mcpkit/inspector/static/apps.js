// MCP Apps in the inspector's page: after a call of a tool whose `_meta.ui.resourceUri`
// names a view, the view is rendered below the result (docs/apps.md, "Rendering").
//
// The view never runs on this page's origin. The backend gives a sandbox proxy URL on
// another loopback port (sandbox.py); the proxy iframe gets `allow-scripts
// allow-same-origin` and nothing more (no top navigation, no popups), and it holds the view
// in an inner iframe of its own. Each JSON-RPC message the view posts arrives here from that
// proxy only (origin and window checked) and goes to the backend's bridge
// (POST /api/view/message), whose answer, and what the host sends the view, go back to the
// proxy. The view's size-changed notifications size the iframe.

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const MAX_HEIGHT = 4000; // px: a view cannot grow the page without bound
const views = new Map(); // view id -> { frame, origin }

async function post(path, body) {
  const answer = await fetch(path, {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const value = await answer.json().catch(() => ({ error: `HTTP ${answer.status}` }));
  if (!answer.ok) throw new Error(typeof value.error === "string" ? value.error : `HTTP ${answer.status}`);
  return value;
}

function resourceUri(tool) {
  const ui = tool && tool._meta && tool._meta.ui;
  if (ui && typeof ui.resourceUri === "string") return ui.resourceUri;
  const flat = tool && tool._meta && tool._meta["ui/resourceUri"]; // the deprecated form
  return typeof flat === "string" ? flat : null;
}

/** Render the view of `tool` for a call (`args`, its `result`) at the end of `output`. */
export async function showView(tool, args, result, output) {
  if (!resourceUri(tool) || !result || result.isError) return;
  const box = document.createElement("section");
  box.className = "app-view";
  const heading = document.createElement("h4");
  heading.textContent = `View ${resourceUri(tool)}`;
  box.append(heading);
  output.append(box);
  let opened;
  try {
    opened = await post("/api/view", { tool: tool.name, arguments: args || {}, result });
  } catch (error) {
    const problem = document.createElement("p");
    problem.className = "error";
    problem.textContent = `The view cannot be shown: ${error.message}`;
    box.append(problem);
    return;
  }
  box.append(frameFor(opened));
}

function frameFor(opened) {
  const frame = document.createElement("iframe");
  frame.className = "app-frame";
  frame.title = `MCP App view ${opened.uri}`;
  // the proxy's own origin is the sandbox port; scripts run there, and nothing else is allowed
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  if (opened.allow) frame.setAttribute("allow", opened.allow);
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.dataset.view = opened.id;
  Object.assign(frame.style, { display: "block", width: "100%", height: "120px", border: "0" });
  if (opened.prefersBorder !== false) Object.assign(frame.style, { border: "1px solid #d9dbe0", borderRadius: "6px" });
  views.set(opened.id, { frame, origin: opened.origin });
  frame.src = `${opened.url}?host=${encodeURIComponent(location.origin)}`;
  return frame;
}

function viewOf(event) {
  for (const [id, entry] of views) {
    if (!entry.frame.isConnected) views.delete(id); // its output was replaced: gone
    else if (event.source === entry.frame.contentWindow && event.origin === entry.origin) return [id, entry];
  }
  return [null, null];
}

function resize(frame, params) {
  const height = params && params.height;
  if (typeof height === "number" && Number.isFinite(height) && height >= 0) {
    frame.style.height = `${Math.min(Math.ceil(height), MAX_HEIGHT) + 2}px`; // + the border
  }
}

async function relay(event) {
  const [id, entry] = viewOf(event);
  const message = event.data;
  if (!id || !message || typeof message !== "object") return;
  if (typeof message.method === "string" && message.method.startsWith("ui/notifications/sandbox-")) return;
  if (message.method === "ui/notifications/size-changed") resize(entry.frame, message.params);
  let answer;
  try {
    answer = await post("/api/view/message", { id, message });
  } catch (error) {
    console.error("inspector: a view's message was not delivered", error);
    return;
  }
  const target = entry.frame.contentWindow;
  if (!target) return;
  if (answer.answer) target.postMessage(answer.answer, entry.origin);
  for (const sent of answer.posts || []) target.postMessage(sent, entry.origin);
}

window.addEventListener("message", (event) => { relay(event); });
