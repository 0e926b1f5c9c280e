// The page's MCP Apps host (io.modelcontextprotocol/ui, SEP-1865), in plain JavaScript.
//
// Each paragraph of class `mcp-app` on a page (data-endpoint, data-tool, data-argument-*) becomes a
// view: the host lists the endpoint's tools declaring the extension, reads the tool's
// `_meta.ui.resourceUri` with resources/read, calls the tool, and renders the view in a sandbox
// proxy served by the same server under its *other* loopback name (localhost for a server on
// 127.0.0.1, and the reverse), so the view never shares the page's origin. The server is the
// site's own when it serves the endpoints (./scripts/serve), else the reader's `mcpref demo`, found
// by the lookup the try-it console shares (server.js): on a static copy, the published site
// included. The proxy applies the view's CSP (mcpref/examples/host/sandbox.py); this file is the
// bridge: ui/initialize with the page's theme, tool input and result, size changes, the view's
// tools/call (visibility enforced here), the palette toggle, and teardown. Every message crossing the bridge is listed under the view.
(() => {
  "use strict";
  const UI = "io.modelcontextprotocol/ui";
  const MIME = "text/html;profile=mcp-app";
  const VERSION = "2026-07-28";
  const APPS_VERSION = "2026-01-26";
  const REFUSED = -32000; // implementation-defined: the host refuses what a view may not do
  const MAX_HEIGHT = 640;
  // Both palettes at once: the view resolves light-dark() by the `theme` it is given.
  const VARIABLES = {
    "--color-background-primary": "light-dark(#ffffff, #1e2129)",
    "--color-text-primary": "light-dark(#1f2328, #e2e4e9)",
    "--color-text-secondary": "light-dark(#59636e, #a0a7b4)",
    "--color-border-primary": "light-dark(#d1d9e0, #3d4450)",
    "--color-ring-primary": "light-dark(#4051b5, #7c8ff0)",
    "--color-text-danger": "light-dark(#b42318, #ff7b72)",
    "--font-sans": '"Roboto", system-ui, sans-serif',
  };

  const theme = () => (document.body.dataset.mdColorScheme === "slate" ? "dark" : "light");
  const themeContext = () => ({ theme: theme(), styles: { variables: VARIABLES } });

  // The proxy runs on the server that serves the view, under its other loopback name.
  function sandboxOrigin(server) {
    const other = server.hostname === "localhost" ? "127.0.0.1" : "localhost";
    return `${server.protocol}//${other}${server.port ? `:${server.port}` : ""}`;
  }

  // The endpoint at `path` on the pages' reference server (server.js: the site's own, else the
  // reader's local one, found once per page and shared with the try-it console), and its tools.
  async function findEndpoint(path) {
    const found = await window.mcprefServer.find();
    if (found.kind === "none") throw new NoServer(`Tried ${found.tried.join("; ")}.`);
    const endpoint = window.mcprefServer.resolve(path, found.root);
    return { endpoint, tools: await listTools(endpoint.href) };
  }
  class NoServer extends Error {}

  // What a reader without a server is told: the one command, and where the site says how to install it.
  function startHint(tried) {
    const guide = document.createElement("a");
    guide.href = new URL("guides/run-it/#the-pages-endpoints-on-your-machine", window.mcprefServer.siteRoot).href;
    guide.textContent = "Run it";
    return [
      "The live view needs a reference server on your machine: mcpref demo (",
      guide,
      " says how to install it; in a clone, ./scripts/serve), then reload this page. ",
      tried,
    ];
  }

  // -- MCP over Streamable HTTP, declaring the extension on every request -------------------

  let nextRequestId = 1;
  const SAFE = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;
  function headerValue(value) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    if (SAFE.test(text)) return text;
    const bytes = new TextEncoder().encode(text);
    return `=?base64?${btoa(String.fromCharCode(...bytes))}?=`;
  }

  async function mcp(endpoint, method, params, tool) {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": VERSION,
      "io.modelcontextprotocol/clientCapabilities": { extensions: { [UI]: { mimeTypes: [MIME] } } },
    };
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": VERSION,
      "Mcp-Method": method,
    };
    if (method === "tools/call") headers["Mcp-Name"] = params.name;
    if (method === "resources/read") headers["Mcp-Name"] = params.uri;
    // Arguments a tool's schema marks with x-mcp-header travel in Mcp-Param-* headers too.
    for (const [name, schema] of Object.entries(tool?.inputSchema?.properties || {})) {
      const value = params.arguments?.[name];
      if (schema["x-mcp-header"] && value !== undefined && value !== null) {
        headers[`Mcp-Param-${schema["x-mcp-header"]}`] = headerValue(value);
      }
    }
    const id = nextRequestId++;
    const response = await fetch(endpoint, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }),
      cache: "no-store",
    });
    const text = await response.text();
    const type = response.headers.get("content-type") || "";
    if (type.startsWith("text/event-stream")) {
      const messages = text.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)));
      return messages.find((m) => m.id === id) || { error: { code: -32603, message: "no answer in the stream" } };
    }
    if (!type.startsWith("application/json")) throw new Error(`${endpoint} answered ${response.status}, not MCP`);
    return JSON.parse(text);
  }

  async function listTools(endpoint) {
    const tools = [];
    let cursor;
    do {
      const answer = await mcp(endpoint, "tools/list", cursor ? { cursor } : {});
      if (answer.error) throw new Error(answer.error.message);
      tools.push(...answer.result.tools);
      cursor = answer.result.nextCursor;
    } while (cursor);
    return tools;
  }

  // The tool's link to its view: `_meta.ui`, or the deprecated flat key (read, never written).
  function linkOf(tool) {
    const meta = tool?._meta || {};
    const ui = meta.ui || {};
    const visibility = Array.isArray(ui.visibility) ? ui.visibility : ["model", "app"];
    return { resourceUri: ui.resourceUri || meta["ui/resourceUri"] || null, visibility };
  }

  // -- one view ------------------------------------------------------------------------------

  // A page marks where a view goes with a paragraph: `{: .mcp-app data-tool=... data-argument-city=... }`.
  // Each data-argument-* is one argument, a JSON value if it parses as one, else a string.
  function argumentsOf(marker) {
    const args = {};
    for (const [key, raw] of Object.entries(marker.dataset)) {
      if (!key.startsWith("argument") || key === "argument") continue;
      const name = key[8].toLowerCase() + key.slice(9);
      try {
        args[name] = JSON.parse(raw);
      } catch {
        args[name] = raw;
      }
    }
    return args;
  }

  function mount(marker) {
    const container = document.createElement("div");
    container.className = "mcp-app-host";
    marker.replaceWith(container);
    const path = marker.dataset.endpoint || "/mcp";
    const toolName = marker.dataset.tool;
    const args = argumentsOf(marker);
    let endpoint = null; // the full URL, once a server answered
    let sandbox = null;
    const caption = document.createElement("p");
    caption.className = "mcp-app-caption";
    const frame = document.createElement("iframe");
    const log = document.createElement("ol");
    const details = document.createElement("details");
    details.className = "mcp-app-log";
    details.innerHTML = "<summary>Messages between the page and the view</summary>";
    details.append(log);
    const close = document.createElement("button");
    close.type = "button";
    close.className = "md-button mcp-app-close";
    close.textContent = "Tear the view down";
    let tools = [];
    let initialized = false;
    let hostId = 1;
    const waiting = new Map();

    function note(direction, message) {
      const item = document.createElement("li");
      const what = message.method || (message.error ? `error ${message.error.code}` : "result");
      item.dataset.direction = direction;
      item.dataset.method = message.method || "";
      item.textContent = `${direction}: ${what}${"id" in message ? ` (id ${message.id})` : ""}`;
      log.append(item);
    }
    function toView(message) {
      const full = { jsonrpc: "2.0", ...message };
      if (!full.method?.startsWith("ui/notifications/sandbox-")) note("page → view", full);
      frame.contentWindow?.postMessage(full, sandbox);
    }
    const reply = (id, result) => toView({ id, result });
    const refuse = (id, code, message) => toView({ id, error: { code, message } });
    function requestView(method, params) {
      const id = `host-${hostId++}`;
      toView({ id, method, params });
      return new Promise((resolve) => waiting.set(id, resolve));
    }

    async function viewCallsTool(id, params) {
      const tool = tools.find((t) => t.name === params?.name);
      if (!tool) return refuse(id, REFUSED, `${params?.name} is not a tool of this view's server`);
      const { visibility } = linkOf(tool);
      if (!visibility.includes("app")) {
        return refuse(id, REFUSED, `${tool.name} is not callable by views (visibility: ${visibility.join(", ")})`);
      }
      const answer = await mcp(endpoint, "tools/call", { name: tool.name, arguments: params.arguments || {} }, tool);
      toView(answer.error ? { id, error: answer.error } : { id, result: answer.result });
    }

    async function onMessage(event) {
      if (event.source !== frame.contentWindow || event.origin !== sandbox) return;
      const message = event.data;
      if (!message || message.jsonrpc !== "2.0") return;
      if (message.method === "ui/notifications/sandbox-proxy-ready") {
        return toView({ method: "ui/notifications/sandbox-resource-ready", params: view.resource });
      }
      note("view → page", message);
      const { id, method, params } = message;
      if (method === undefined && waiting.has(id)) {
        waiting.get(id)(message);
        waiting.delete(id);
      } else if (method === "ui/initialize") {
        container.dataset.appCapabilities = JSON.stringify(params?.appCapabilities ?? null);
        reply(id, {
          protocolVersion: APPS_VERSION,
          hostInfo: { name: "mcpref docs page", version: "1.0.0" },
          hostCapabilities: { serverTools: {}, logging: {}, sandbox: { csp: view.resource.csp } },
          hostContext: {
            ...themeContext(),
            toolInfo: { tool: view.tool },
            displayMode: "inline",
            availableDisplayModes: ["inline"],
            containerDimensions: { maxHeight: MAX_HEIGHT },
            platform: "web",
            locale: navigator.language,
          },
        });
      } else if (method === "ui/notifications/initialized") {
        // Nothing goes to the view before this (MCP Apps §Sandbox proxy, point 6).
        initialized = true;
        toView({ method: "ui/notifications/tool-input", params: { arguments: args } });
        const answer = await view.call;
        if (answer.error) toView({ method: "ui/notifications/tool-cancelled", params: { reason: answer.error.message } });
        else toView({ method: "ui/notifications/tool-result", params: answer.result });
      } else if (method === "ui/notifications/size-changed") {
        const height = Math.min(Math.max(Math.ceil(Number(params?.height) || 0), 40), MAX_HEIGHT);
        frame.style.height = `${height}px`;
        frame.dataset.reportedHeight = String(params?.height);
      } else if (method === "tools/call") {
        await viewCallsTool(id, params);
      } else if (method === "ping") {
        reply(id, {});
      } else if (method === "ui/request-display-mode") {
        reply(id, { mode: "inline" });
      } else if (method === "notifications/message") {
        console.info("MCP App view:", params?.data);
      } else if (id !== undefined) {
        refuse(id, -32601, `Method not found: ${method} (this page offers no ${method})`);
      }
    }

    const view = {};
    async function start() {
      caption.textContent = `Loading the view of ${toolName} …`;
      container.replaceChildren(caption);
      const found = await findEndpoint(path);
      endpoint = found.endpoint.href;
      sandbox = sandboxOrigin(found.endpoint);
      tools = found.tools;
      view.tool = tools.find((t) => t.name === toolName);
      const uri = linkOf(view.tool).resourceUri;
      if (!uri) throw new Error(`${toolName} names no view`);
      // A call that fails on the way (no answer, not MCP) reaches the view as a cancellation too.
      view.call = mcp(endpoint, "tools/call", { name: toolName, arguments: args }, view.tool).catch((error) => ({
        error: { code: -32603, message: String(error.message || error) },
      }));
      const read = await mcp(endpoint, "resources/read", { uri });
      if (read.error) throw new Error(read.error.message);
      const content = read.result.contents.find((c) => c.uri === uri);
      if (!content || content.mimeType !== MIME) throw new Error(`${uri} is not a ${MIME} resource`);
      const html =
        typeof content.text === "string"
          ? content.text
          : new TextDecoder().decode(Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0)));
      const csp = content._meta?.ui?.csp || {};
      view.resource = { html, csp };
      frame.className = "mcp-app-frame";
      frame.title = `View of ${toolName} (${uri})`;
      frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
      const query = new URLSearchParams({ host: location.origin, csp: JSON.stringify(csp) });
      frame.src = `${sandbox}/apps/sandbox?${query}`;
      frame.style.height = "120px";
      if (content._meta?.ui?.prefersBorder === false) frame.classList.add("mcp-app-borderless");
      caption.textContent = `${uri}, from ${endpoint}, sandboxed on ${sandbox}`;
      const external = [...new Set(Object.values(csp).flat())];
      if (external.length) caption.textContent += `; it may reach ${external.join(", ")}`;
      container.replaceChildren(caption, frame, close, details);
      window.addEventListener("message", onMessage);
    }

    new MutationObserver(() => {
      if (initialized) toView({ method: "ui/notifications/host-context-changed", params: themeContext() });
    }).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });

    close.addEventListener("click", async () => {
      close.disabled = true;
      // The host asks first and waits a moment for the answer, so the view can save its state.
      await Promise.race([
        requestView("ui/resource-teardown", { reason: "closed by the reader" }),
        new Promise((resolve) => setTimeout(resolve, 2000)),
      ]);
      window.removeEventListener("message", onMessage);
      initialized = false;
      frame.remove();
      close.remove();
      caption.textContent = "The view was torn down. Reload the page to render it again.";
      container.dataset.state = "closed";
    });

    start().then(
      () => (container.dataset.state = "rendered"),
      (error) => {
        container.dataset.state = "no-server";
        if (error instanceof NoServer) caption.replaceChildren(...startHint(error.message));
        else caption.textContent = String(error.message || error);
      },
    );
  }

  const mountAll = () => document.querySelectorAll("p.mcp-app").forEach(mount);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
