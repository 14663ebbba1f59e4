"""A server whose MCP Apps view tries WebRTC to reach a "STUN server" it did not declare
(test_apps_browser.py): UDP goes around a view's CSP unless the host takes WebRTC away.

`STUN` (env): JSON, each way of trying -> the 127.0.0.1 UDP port it aims at, so the test sees
which way got through. The ways: `RTCPeerConnection` and `webkitRTCPeerConnection` in the
view; from a frame the view makes (its globals, and `window[N]`); a frame's own code from
`srcdoc` (in the markup, set after insertion, in a shadow root) and from a `javascript:` URL;
a srcdoc frame made after the view replaced the DOM and string methods a guard would use;
a frame with a srcdoc in a declarative shadow root (`<template shadowrootmode>`: in the
markup, `Document.parseHTMLUnsafe`, inside a frame's srcdoc; this Chromium's
`setHTMLUnsafe` makes none).
The view writes what each way met into `#results` (JSON; "done" once all were tried and
its frames have loaded), then reports its size."""

from __future__ import annotations

import json
import os

from mcpkit import Server

STUN = os.environ.get("STUN", "{}")

# a frame's own code: one peer connection to the port __PORT__, ICE gathering started
OFFER = (
    "const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:__PORT__'}]});"
    "pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o));"
)

VIEW = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>pre { white-space: pre-wrap; }
iframe { width: 24px; height: 16px; border: 1px solid #ccc; }</style></head>
<body>
<p>webrtc view</p>
<script>
const markupLoaded = new Promise((resolve) => document.addEventListener("load", (event) => {
  if (event.target.id === "markup") resolve();
}, true));
</script>
<iframe id="markup" srcdoc="<script>__MARKUP__</script>"></iframe>
<div><template shadowrootmode="open">
<iframe srcdoc="<script>__DSD__</script>"></iframe></template></div>
<div id="host"></div>
<pre id="results">{}</pre>
<script>
"use strict";
const STUN = __STUN__;
const OFFER = __OFFER__;
const results = {};
function save(key, value) {
  results[key] = value;
  document.getElementById("results").textContent = JSON.stringify(results);
}
function offer(key, make) {
  try {
    const pc = make({ iceServers: [{ urls: "stun:127.0.0.1:" + STUN[key] }] });
    pc.createDataChannel("x");
    pc.createOffer().then((o) => pc.setLocalDescription(o));
    save(key, "made");
  } catch (error) { save(key, "blocked: " + error.name); }
}
function frame(parent) {
  const made = document.createElement("iframe");
  made.style.cssText = "width: 24px; height: 16px";
  parent.appendChild(made);
  return made;
}
const loaded = (made) => new Promise((resolve) => made.addEventListener("load", resolve));
const own = (key) => "<script>" + OFFER.replace("__PORT__", STUN[key]) + "</" + "script>";
save("compatMode", document.compatMode); // the guard put before it kept the doctype first
offer("direct", (c) => new RTCPeerConnection(c));
offer("webkit", (c) => new webkitRTCPeerConnection(c));
offer("childGlobal", (c) => new (frame(document.body).contentWindow.RTCPeerConnection)(c));
offer("childIndex", (c) => {
  frame(document.body);
  return new window[window.length - 1].RTCPeerConnection(c);
});
const waits = [markupLoaded];
const later = frame(document.body);
waits.push(loaded(later));
later.srcdoc = own("srcdocSet");
const shadow = frame(document.getElementById("host").attachShadow({ mode: "closed" }));
waits.push(loaded(shadow));
shadow.srcdoc = own("srcdocShadow");
const script = document.createElement("iframe");
script.src = "javascript:" + JSON.stringify(own("javascriptUrl"));
waits.push(loaded(script));
document.body.appendChild(script);
// frames in declarative shadow roots: in HTML the view parses, puts in a srcdoc (the
// attribute's name made at run time: the guard must see it there, not in this text)
const attribute = (text) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
const mode = "shadowroot" + "mode";
const declared = (key) =>
  `<template ${mode}="open"><iframe srcdoc="${attribute(own(key))}"></iframe></template>`;
const parsed = Document.parseHTMLUnsafe(`<div>${declared("dsdParse")}</div>`);
document.body.append(...parsed.body.childNodes);
const nested = frame(document.body);
waits.push(loaded(nested));
nested.srcdoc = `<div>${declared("dsdSrcdoc")}</div>`;
// last, a frame made once the view replaced what a guard would use (it must have its own)
const poisonedDoc = own("srcdocPoisoned");
const noop = function () { return null; };
const replaced = [
  [window, ["MutationObserver"]], [MutationObserver.prototype, ["observe"]], [Reflect, ["apply"]],
  [Element.prototype, ["setAttribute", "getAttribute", "querySelectorAll"]],
  [String.prototype, ["slice", "charCodeAt", "replace", "startsWith"]],
  [NodeList.prototype, ["item"]],
].map(([owner, names]) => [owner, names.map((name) => [name, owner[name]])]);
for (const [owner, names] of replaced) for (const [name] of names) owner[name] = noop;
const poisoned = frame(document.body);
waits.push(loaded(poisoned));
poisoned.srcdoc = poisonedDoc;
// put back after the guard's mutation callback (queued before this): Selenium needs them
queueMicrotask(() => {
  for (const [owner, names] of replaced) for (const [name, value] of names) owner[name] = value;
});
Promise.all(waits).then(() => {
  save("done", true);
  const { scrollWidth: width, scrollHeight: height } = document.documentElement;
  const params = { width, height };
  const size = "ui/notifications/size-changed";
  window.parent.postMessage({ jsonrpc: "2.0", method: size, params }, "*");
});
</script>
</body></html>
"""


def view() -> str:
    ports = json.loads(STUN)
    markup = OFFER.replace("__PORT__", str(ports.get("srcdocMarkup", 9)))
    declared = OFFER.replace("__PORT__", str(ports.get("dsdMarkup", 9)))
    return (
        VIEW.replace("__STUN__", json.dumps(ports))
        .replace("__DSD__", declared)
        .replace("__OFFER__", json.dumps(OFFER))
        .replace("__MARKUP__", markup)
    )


server = Server("webrtc-app")


@server.app("ui://webrtc/view")
def webrtc_view() -> str:
    return view()


@server.tool(app="ui://webrtc/view")
def open_view() -> str:
    """The tool whose result the WebRTC view renders."""
    return "webrtc view opened"


if __name__ == "__main__":
    server.run()
