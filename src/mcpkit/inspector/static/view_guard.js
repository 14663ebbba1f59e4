// Put first in every MCP Apps view's document by the sandbox server (sandbox.py), before
// the view's own code: takes WebRTC away from the view. A view's CSP limits what it fetches,
// but no CSP directive this browser honours covers RTCPeerConnection, whose ICE (a STUN or
// TURN server) sends UDP to any address: a way out around `connect-src`.
//
// Nested documents: the view's frame is sandboxed without allow-same-origin, so a frame it
// makes is another opaque origin whose globals it cannot read. Such a frame runs code of its
// own only from `srcdoc` (which gets this script put first too) or a `javascript:` URL (made
// `about:blank`); watched in the document and in every shadow root `attachShadow` makes. A
// declarative shadow root (`<template shadowrootmode>`) would hide its frames from that
// watch: the attribute is renamed in every HTML parsed with them (the view's own, by
// sandbox.py; srcdoc, write, setHTMLUnsafe, parseHTMLUnsafe, here): such a template stays
// inert. The view runs after this and may replace any global or prototype method: what the
// guard uses later is taken now, and called through the `apply` taken now.
"use strict";
(() => {
  const NAMES = ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCIceTransport"];
  const apply = Reflect.apply;
  const define = Object.defineProperty;
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const toString = String;
  const { charCodeAt, slice } = String.prototype;
  const { getAttribute, setAttribute, querySelectorAll } = Element.prototype;
  const localName = getter(Element.prototype, "localName");
  const nodeType = getter(Node.prototype, "nodeType");
  const listLength = getter(NodeList.prototype, "length");
  const listItem = NodeList.prototype.item;
  const recordType = getter(MutationRecord.prototype, "type");
  const recordTarget = getter(MutationRecord.prototype, "target");
  const recordAdded = getter(MutationRecord.prototype, "addedNodes");
  const Observer = MutationObserver;
  const observe = MutationObserver.prototype.observe;
  const source = document.currentScript ? document.currentScript.textContent : "";
  const first = "<script>" + source + "</" + "script>";

  for (const name of NAMES) {
    delete window[name];
    define(window, name, { value: undefined, configurable: false, writable: false });
  }

  // does `text` hold the ASCII word `lower` (lowercase) at `at`, in any case?
  function wordAt(text, at, lower) {
    for (let i = 0; i < lower.length; i++) {
      const code = apply(charCodeAt, text, [at + i]);
      const folded = code >= 65 && code <= 90 ? code + 32 : code;
      if (folded !== apply(charCodeAt, lower, [i])) return false;
    }
    return true;
  }

  // `shadowrootmode` -> `shadowrootmodx`, the case kept (an identifier stays one)
  function tame(html) {
    const text = toString(html);
    const word = "shadowrootmode";
    let out = "";
    let from = 0;
    for (let at = 0; at + word.length <= text.length; at++) {
      if (!wordAt(text, at, word)) continue;
      const last = at + word.length - 1;
      out += apply(slice, text, [from, last]) + (apply(charCodeAt, text, [last]) === 69 ? "X" : "x");
      from = last + 1;
    }
    return out + apply(slice, text, [from]);
  }

  // a URL's scheme is read past leading spaces and controls, tabs and newlines anywhere
  function isJavascript(url) {
    let plain = "";
    for (let i = 0; i < url.length; i++) {
      const code = apply(charCodeAt, url, [i]);
      if (code === 9 || code === 10 || code === 13 || (plain === "" && code <= 32)) continue;
      plain += url[i];
      if (plain.length === 11) break;
    }
    return plain.length === 11 && wordAt(plain, 0, "javascript:");
  }

  function guardFrame(frame) {
    const srcdoc = apply(getAttribute, frame, ["srcdoc"]);
    if (srcdoc !== null) {
      const own = srcdoc.length >= first.length && apply(slice, srcdoc, [0, first.length]) === first;
      const wanted = first + tame(own ? apply(slice, srcdoc, [first.length]) : srcdoc);
      if (wanted !== srcdoc) apply(setAttribute, frame, ["srcdoc", wanted]);
    }
    const src = apply(getAttribute, frame, ["src"]);
    if (src !== null && isJavascript(src)) apply(setAttribute, frame, ["src", "about:blank"]);
  }

  const isFrame = (node) => {
    const name = apply(localName, node, []);
    return name === "iframe" || name === "frame";
  };

  function guardNode(node) {
    if (apply(nodeType, node, []) !== 1) return;
    if (isFrame(node)) guardFrame(node);
    const frames = apply(querySelectorAll, node, ["iframe, frame"]);
    const count = apply(listLength, frames, []);
    for (let i = 0; i < count; i++) guardFrame(apply(listItem, frames, [i]));
  }

  // a frame's srcdoc or src loads in a later task: this runs (a microtask) before it does
  function watch(root) {
    const observer = new Observer((records) => {
      for (let i = 0; i < records.length; i++) {
        const record = records[i];
        if (apply(recordType, record, []) === "attributes") {
          const target = apply(recordTarget, record, []); // an element: its src or srcdoc?
          if (isFrame(target)) guardFrame(target);
        }
        const added = apply(recordAdded, record, []);
        const count = apply(listLength, added, []);
        for (let j = 0; j < count; j++) guardNode(apply(listItem, added, [j]));
      }
    });
    apply(observe, observer, [root, { childList: true, subtree: true, attributes: true }]);
  }

  function wrapMethod(owner, name, wrap) {
    const original = owner && owner[name];
    if (typeof original !== "function") return;
    define(owner, name, { value: wrap(original), configurable: false, writable: false });
  }

  const htmlFirst = (original) => function (html, options) {
    return apply(original, this, [tame(html), options]);
  };
  const written = (original) => function (...html) {
    let text = ""; // write(a, b) is write(a + b)
    for (let i = 0; i < html.length; i++) text += tame(html[i]);
    return apply(original, this, [text]);
  };
  wrapMethod(Element.prototype, "attachShadow", (original) => function (init) {
    const root = apply(original, this, [init]);
    watch(root);
    return root;
  });
  wrapMethod(Document.prototype, "write", written);
  wrapMethod(Document.prototype, "writeln", written);
  for (const owner of [Element.prototype, ShadowRoot.prototype]) {
    wrapMethod(owner, "setHTMLUnsafe", htmlFirst);
    wrapMethod(owner, "setHTML", htmlFirst);
  }
  wrapMethod(Document, "parseHTMLUnsafe", htmlFirst);
  wrapMethod(Document, "parseHTML", htmlFirst);
  watch(document);
})();
