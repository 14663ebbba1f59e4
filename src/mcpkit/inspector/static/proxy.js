// The sandbox proxy of an MCP Apps view (served on the sandbox origin, sandbox.py): relays
// JSON-RPC between the view in its inner iframe and the inspector's page, and nothing else.
// It starts no request of its own; it drops the spec's `ui/notifications/sandbox-*`
// messages, which are between it and the page only.
"use strict";
(() => {
  const host = document.currentScript.dataset.host;
  const isRelayed = (data) =>
    data !== null && typeof data === "object" && data.jsonrpc === "2.0" &&
    !(typeof data.method === "string" && data.method.startsWith("ui/notifications/sandbox-"));

  window.addEventListener("message", (event) => {
    const view = document.getElementById("view");
    if (!view || !isRelayed(event.data)) return;
    if (event.source === view.contentWindow) {
      window.parent.postMessage(event.data, host); // only ever to the inspector's page
    } else if (event.source === window.parent && event.origin === host) {
      view.contentWindow.postMessage(event.data, "*"); // the view's origin is opaque
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, host);
})();
