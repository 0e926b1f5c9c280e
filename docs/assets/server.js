/* Where the pages' reference server answers: the one lookup the try-it console (try-it.js) and the
 * MCP Apps live view (apps-host.js) share, so both send to the same place and ask only once.
 *
 * In order: the site's own root when it serves the endpoints too (`./scripts/serve`, at any base
 * path), else the reader's local server (`mcpref demo`, http://127.0.0.1:8000/ unless the reader
 * named another with "Use another address"), which allows the published site's origin.
 *
 * The site's own answer is remembered for the visit (sessionStorage): a static copy (the published
 * site) answers the probe's POST with a 405, which a reader would otherwise meet in DevTools on
 * every page. The local server is asked on every page load, so one started meanwhile is found on
 * the next reload, as the console's hint says.
 */
(function () {
  "use strict";

  const LOCAL_KEY = "mcpref.localServer";
  const SITE_KEY = "mcpref.siteServer:"; // + the site's root: "yes" or what the probe met
  const DEFAULT_LOCAL = "http://127.0.0.1:8000/";
  const PROTOCOL_VERSION = "2026-07-28";

  // The site's root, as Material knows it (its base, relative to this page): same-origin requests
  // go under it, so a site served under a sub-path calls that sub-path's endpoints.
  const siteRoot = (() => {
    try {
      return new URL(JSON.parse(document.getElementById("__config").textContent).base + "/", location.href);
    } catch {
      return new URL("/", location.href);
    }
  })();
  const localRoot = () => {
    try {
      return new URL(localStorage.getItem(LOCAL_KEY) || DEFAULT_LOCAL);
    } catch {
      return new URL(DEFAULT_LOCAL);
    }
  };
  const chooseLocal = (address) => localStorage.setItem(LOCAL_KEY, new URL(address).href);
  const resolve = (target, root) => new URL(target.replace(/^\//, ""), root);

  // Does a reference server answer at `root`? One server/discover, as a client sends it: null if
  // it does, else what answered instead.
  async function probe(root) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 4000);
    try {
      const response = await fetch(resolve("/mcp", root), {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": PROTOCOL_VERSION,
          "Mcp-Method": "server/discover",
        },
        body: JSON.stringify({
          jsonrpc: "2.0", id: "mcpref-site-probe", method: "server/discover",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION, "io.modelcontextprotocol/clientCapabilities": {} } },
        }),
        cache: "no-store",
        signal: controller.signal,
      });
      const type = response.headers.get("content-type") || "";
      if (/application\/json/.test(type) && "result" in (await response.json())) return null;
      return `answered ${response.status}${type ? ` ${type.split(";")[0]}` : ""}, not as a reference server does`;
    } catch (error) {
      return error.name === "AbortError" ? "no answer within 4 s" : String(error.message || error);
    } finally {
      clearTimeout(timer);
    }
  }

  async function probeSite() {
    const key = SITE_KEY + siteRoot.href;
    let remembered = null;
    try {
      remembered = sessionStorage.getItem(key);
    } catch {} // storage refused: ask every time
    if (remembered !== null) return remembered === "yes" ? null : `${remembered} (remembered for this visit)`;
    const met = await probe(siteRoot);
    try {
      sessionStorage.setItem(key, met === null ? "yes" : met);
    } catch {}
    return met;
  }

  // {kind: "site" | "local" | "none", root, tried}: `tried` says, for each place asked in vain,
  // what answered there. Asked once per page, shared by every console and view.
  let found = null;
  function find() {
    if (!found) {
      found = (async () => {
        const tried = [];
        if (location.protocol !== "file:") {
          const met = await probeSite();
          if (met === null) return { kind: "site", root: siteRoot, tried };
          tried.push(`${resolve("/mcp", siteRoot).href}: ${met}`);
        }
        const local = localRoot();
        if (local.origin !== siteRoot.origin) {
          const met = await probe(local);
          if (met === null) return { kind: "local", root: local, tried };
          tried.push(`${resolve("/mcp", local).href}: ${met}`);
        }
        return { kind: "none", root: local, tried };
      })();
    }
    return found;
  }

  window.mcprefServer = { siteRoot, localRoot, chooseLocal, resolve, find };
})();
