"""An MCP Apps example: a chart view, a tool that renders in it, and an app-only tool its
button calls.

    mcpkit run examples/apps/chart_server.py            # stdio
    mcpkit run examples/apps/chart_server.py --transport http --port 8000

`show_chart` is the model's tool: a host with MCP Apps renders its result in the view
`ui://chart/view`; any other host shows its text. `add_point` is for the view only
(visibility ["app"]): no model is offered it, and the view's "Add a point" button calls it.
The view is inline HTML and JavaScript with no dependency and no network access (the
restrictive default CSP is all it needs): it draws the points as an SVG bar chart.
"""

from __future__ import annotations

from mcpkit import Server

server = Server("chart", version="1.0.0", instructions="show_chart draws the series.")
points: list[float] = [3.0, 5.0, 2.0, 6.0]

VIEW = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<style>
  body { font-family: var(--font-sans, sans-serif); margin: 0; padding: 12px;
         color: var(--color-text-primary, #171717); }
  svg { display: block; width: 100%; height: 160px; }
  rect { fill: #3b82f6; }
  button { margin-top: 8px; }
</style>
</head>
<body>
<div id="title">Waiting for the host...</div>
<svg id="chart" viewBox="0 0 300 160" preserveAspectRatio="none" role="img"></svg>
<button id="add" disabled>Add a point</button>
<script>
"use strict";
let nextId = 1;
const pending = new Map();

function post(message) { window.parent.postMessage(message, "*"); }

function request(method, params) {
  const id = nextId++;
  post({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function notify(method, params) { post({ jsonrpc: "2.0", method, params }); }

function draw(series) {
  const svg = document.getElementById("chart");
  const top = Math.max(1, ...series);
  const width = 300 / Math.max(1, series.length);
  svg.replaceChildren(...series.map((value, i) => {
    const bar = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    const height = (value / top) * 150;
    bar.setAttribute("x", String(i * width + 2));
    bar.setAttribute("y", String(160 - height));
    bar.setAttribute("width", String(width - 4));
    bar.setAttribute("height", String(height));
    return bar;
  }));
  document.getElementById("title").textContent = series.length + " points";
}

function show(result) {
  const data = result && result.structuredContent;
  if (data && Array.isArray(data.points)) draw(data.points);
}

window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const message = event.data;
  if (!message || message.jsonrpc !== "2.0") return;
  if (message.id !== undefined && !message.method) {
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (!waiting) return;
    if (message.error) waiting.reject(new Error(message.error.message));
    else waiting.resolve(message.result);
  } else if (message.method === "ui/notifications/tool-result") {
    show(message.params);
  } else if (message.id !== undefined && message.method === "ui/resource-teardown") {
    post({ jsonrpc: "2.0", id: message.id, result: {} });
  }
});

document.getElementById("add").addEventListener("click", async () => {
  const value = Math.round(Math.random() * 9 + 1);
  try {
    show(await request("tools/call", { name: "add_point", arguments: { value } }));
  } catch (error) {
    notify("notifications/message", { level: "error", data: String(error) });
  }
});

new ResizeObserver(() => {
  const { scrollWidth: width, scrollHeight: height } = document.documentElement;
  notify("ui/notifications/size-changed", { width, height });
}).observe(document.documentElement);

(async () => {
  await request("ui/initialize", {
    appInfo: { name: "chart", version: "1.0.0" },
    appCapabilities: { availableDisplayModes: ["inline"] },
    protocolVersion: "2026-01-26",
  });
  notify("ui/notifications/initialized", {});
  document.getElementById("add").disabled = false;
})();
</script>
</body>
</html>
"""


@server.app("ui://chart/view", prefers_border=True)
def chart_view() -> str:
    """A bar chart of the series, with a button that adds a point."""
    return VIEW


@server.tool(app="ui://chart/view")
def show_chart() -> dict[str, list[float]]:
    """Show the series as a chart (hosts without MCP Apps get its values as text)."""
    return {"points": list(points)}


@server.tool(visibility=["app"])
def add_point(value: float) -> dict[str, list[float]]:
    """Add a point to the series (called by the chart's button, never by the model)."""
    points.append(value)
    return {"points": list(points)}


if __name__ == "__main__":
    server.run()
