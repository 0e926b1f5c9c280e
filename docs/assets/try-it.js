/* The try-it console: a Run control under every executed request frame.
 *
 * Run sends the request a frame shows (edited first if the reader likes) to a reference server and
 * shows the real response beside the documented one: status, headers, body, SSE events as they
 * arrive, with the lines that differ highlighted. Placeholders in the documented response
 * (`<<iso-datetime>>`) match any value; a named one (`<<sealed-state:report_state>>`) keeps the
 * real value, and a later request's `{{report_state}}` is filled in with it, as the docs harness
 * does (see docs/contributing.md).
 *
 * Which server: the site's own origin when it serves the endpoints too (`./scripts/serve`, at any
 * base path), else the reader's local one (`mcpref demo`, http://127.0.0.1:8000/ unless the reader
 * named another), which allows the published site's origin (mcpref.demo). Before any click, each
 * console says which one answers, or, when none does, the one command that starts it.
 */
(function () {
  "use strict";

  const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|OPTIONS|HEAD) (\S+) HTTP\/1\.1$/;
  const PLACEHOLDER = /<<([a-z0-9-]+)(?::([A-Za-z_][\w-]*))?>>/g;
  const captured = {}; // {{name}} -> the real value a named placeholder matched
  const LOCAL_KEY = "mcpref.localServer";
  const DEFAULT_LOCAL = "http://127.0.0.1:8000/";
  // mcpref is not on PyPI: a reader installs it from a clone, by path, as the README and Run it say.
  // The repository is the one the site names in its header (mkdocs.yml's repo_url).
  const REPOSITORY = document.querySelector("a.md-source")?.href || "the mcpref repository";
  const START_HINT =
    `No reference server answers. Start one on your machine from a clone: git clone ${REPOSITORY} then ` +
    'pip install "./mcpref[demo]" then mcpref demo (inside the clone, ./scripts/serve does too), and reload this page.';

  /* ------------------------------------------------------------ the server */

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
  const resolve = (target, root) => new URL(target.replace(/^\//, ""), root);

  // Does a reference server answer at `root`? One server/discover, as a client sends it.
  async function answers(root) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 4000);
    try {
      const response = await fetch(resolve("/mcp", root), {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2026-07-28",
          "Mcp-Method": "server/discover",
        },
        body: JSON.stringify({
          jsonrpc: "2.0", id: "mcpref-site-probe", method: "server/discover",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } },
        }),
        cache: "no-store",
        signal: controller.signal,
      });
      return /application\/json/.test(response.headers.get("content-type") || "") && "result" in (await response.json());
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  // Where Run sends: {kind: "site" | "local" | "none", root}. Asked once, shared by every console.
  let server = null;
  function findServer() {
    if (!server) {
      server = (async () => {
        if (location.protocol !== "file:" && (await answers(siteRoot))) return { kind: "site", root: siteRoot };
        const local = localRoot();
        if (local.origin !== siteRoot.origin && (await answers(local))) return { kind: "local", root: local };
        return { kind: "none", root: local };
      })();
    }
    return server;
  }
  const serverLine = (found) =>
    found.kind === "site" ? `Run sends to this site's reference server (${found.root.href}).`
    : found.kind === "local" ? `Run sends to your local reference server at ${found.root.href}.`
    : `${START_HINT} (Looked at ${found.root.href}.)`;

  const el = (tag, props = {}, ...children) => {
    const node = Object.assign(document.createElement(tag), props);
    node.append(...children);
    return node;
  };
  const textOf = (block) => block.querySelector("pre > code").textContent.replace(/\n$/, "");
  const isIllustration = (block) => /^Illustration/.test(block.querySelector(".filename")?.textContent || "");

  /* ------------------------------------------------------------ requests */

  function parseRequest(text) {
    const [head, ...rest] = text.split(/\r?\n\r?\n/);
    const [requestLine, ...headerLines] = head.split(/\r?\n/);
    const [, method, target] = REQUEST_LINE.exec(requestLine.trim()) || [];
    if (!method) throw new Error(`not an HTTP/1.1 request line: ${requestLine}`);
    const headers = [];
    for (const line of headerLines) {
      const colon = line.indexOf(":");
      if (colon > 0) headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
    return { method, target, headers, body: rest.join("\n\n") };
  }

  function fillCaptured(text) {
    const missing = [];
    const filled = text.replace(/\{\{([A-Za-z_][\w-]*)\}\}/g, (whole, name) => {
      if (name in captured) return captured[name];
      missing.push(name);
      return whole;
    });
    return { filled, missing };
  }

  // Headers a browser sets itself and never lets a page set (fetch's forbidden header names): a
  // frame that sets one cannot go out from here as the page shows it, so Run offers curl instead.
  const FORBIDDEN_HEADER =
    /^(accept-charset|accept-encoding|access-control-request-(headers|method)|connection|content-length|cookie2?|date|dnt|expect|host|keep-alive|origin|referer|set-cookie|te|trailer|transfer-encoding|upgrade|via|proxy-.*|sec-.*)$/i;
  const shellQuoted = (text) => `'${text.replace(/'/g, "'\\''")}'`;
  function curlOf(request, url) {
    const body = tryJSON(request.body);
    return [
      "curl -i",
      ...(request.method === "GET" ? [] : ["-X", request.method]),
      shellQuoted(url.href),
      ...request.headers.map(([name, value]) => `-H ${shellQuoted(`${name}: ${value}`)}`),
      ...(request.body ? ["--data-binary", shellQuoted(body.ok ? JSON.stringify(body.value) : request.body)] : []),
    ].join(" ");
  }

  /* ------------------------------------------------------------ comparing */

  // A documented line as a pattern: placeholders match any value; named ones are captured.
  function linePattern(line) {
    const names = [];
    let source = "";
    let last = 0;
    for (const m of line.matchAll(PLACEHOLDER)) {
      source += line.slice(last, m.index).replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "(.+?)";
      names.push(m[2] || null);
      last = m.index + m[0].length;
    }
    source += line.slice(last).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return { regex: new RegExp(`^${source}$`), names };
  }

  function linesMatch(documented, real, captures) {
    if (documented === real) return true;
    if (!documented.includes("<<")) return false;
    const { regex, names } = linePattern(documented);
    const m = regex.exec(real);
    if (!m) return false;
    names.forEach((name, i) => name && (captures[name] = m[i + 1]));
    return true;
  }

  // Real JSON in the documented key order (extra keys after), so equal bodies print alike.
  function ordered(real, documented) {
    if (Array.isArray(real)) return real.map((item, i) => ordered(item, Array.isArray(documented) ? documented[i] : undefined));
    if (!real || typeof real !== "object") return real;
    const out = {};
    const guide = documented && typeof documented === "object" && !Array.isArray(documented) ? documented : {};
    for (const key of Object.keys(guide)) if (key in real) out[key] = ordered(real[key], guide[key]);
    for (const key of Object.keys(real)) if (!(key in out)) out[key] = ordered(real[key], undefined);
    return out;
  }

  function tryJSON(text) {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return { ok: false };
    }
  }

  // A line shown in a column: its text (what is compared), and for a stream's lines, which event
  // it belongs to and whether it is that event's label (its `event:`/`id:` fields).
  const shownLine = (text, event = -1, label = false) => ({ text, event, label });

  // JSON laid out as the pages lay out an event's data (tests/docs/streams.py, `pretty`): indented
  // by two, except that an object or array that fits in WIDTH stays on one line.
  const WIDTH = 60;
  const flat = (value) =>
    Array.isArray(value) ? `[${value.map(flat).join(", ")}]`
    : value && typeof value === "object" ? `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${flat(v)}`).join(", ")}}`
    : JSON.stringify(value);
  function pretty(value, indent = 0, used = 0) {
    const one = flat(value);
    if (!value || typeof value !== "object" || !Object.keys(value).length || indent + used + one.length <= WIDTH) return one;
    const inner = " ".repeat(indent + 2);
    const close = " ".repeat(indent) + (Array.isArray(value) ? "]" : "}");
    const items = Array.isArray(value)
      ? value.map((item) => inner + pretty(item, indent + 2))
      : Object.entries(value).map(([key, item]) => {
          const name = `${JSON.stringify(key)}: `;
          return inner + name + pretty(item, indent + 2, name.length);
        });
    return `${Array.isArray(value) ? "[" : "{"}\n${items.join(",\n")}\n${close}`;
  }

  // A stream's events, as the pages show them: blank lines end an event; its `data:` lines join.
  function streamEvents(body) {
    const events = [];
    let current = null;
    for (const text of body.replace(/\n+$/, "").split("\n")) {
      if (!text.trim()) {
        current = null;
        continue;
      }
      if (!current) events.push((current = { fields: [], data: [], other: [] }));
      const m = /^(data|event|id|retry):(.*)$/.exec(text);
      if (!m) current.other.push(text); // a comment, or a line cut off mid-way (still arriving)
      else if (m[1] === "data") current.data.push(m[2].replace(/^ /, ""));
      else current.fields.push(`${m[1]}: ${m[2].replace(/^ /, "")}`);
    }
    return events;
  }

  // Body lines for display and comparison: JSON pretty-printed; a stream one event per block, its
  // data pretty-printed, in the documented key order (the documented stream's event of that place).
  function bodyLines(body, contentType, guide) {
    if (!body) return [];
    if (/event-stream/.test(contentType)) {
      const guides = streamEvents(guide || "").map((event) => tryJSON(event.data.join("\n")));
      return streamEvents(body).flatMap((event, index) => {
        const lines = event.fields.length ? [shownLine(event.fields.join("  "), index, true)] : [];
        const data = event.data.length ? tryJSON(event.data.join("\n")) : null;
        const g = guides[index];
        if (data && data.ok) {
          const value = g && g.ok ? ordered(data.value, g.value) : data.value;
          lines.push(...pretty(value).split("\n").map((text) => shownLine(text, index)));
        } else lines.push(...event.data.map((text) => shownLine(`data: ${text}`, index)));
        return lines.concat(event.other.map((text) => shownLine(text, index)));
      });
    }
    const parsed = tryJSON(body);
    if (!parsed.ok) return body.split("\n").map((text) => shownLine(text));
    const g = guide === undefined ? { ok: false } : tryJSON(guide);
    return JSON.stringify(g.ok ? ordered(parsed.value, g.value) : parsed.value, null, 2).split("\n").map((text) => shownLine(text));
  }

  function documentedParts(text) {
    const [head, ...rest] = text.split(/\n\n/);
    const [statusLine, ...headerLines] = head.split("\n");
    const headers = headerLines.filter((l) => l.includes(":"));
    const contentType = (headers.find((h) => /^content-type:/i.test(h)) || "").split(":").slice(1).join(":").trim();
    return { statusLine, headers, body: rest.join("\n\n"), contentType };
  }

  // Longest common subsequence over lines: which documented and real lines correspond.
  function diff(documented, real) {
    const n = documented.length;
    const m = real.length;
    const scratch = {};
    const same = (i, j) => linesMatch(documented[i], real[j], scratch);
    const table = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        table[i][j] = same(i, j) ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    const docMatched = new Array(n).fill(false);
    const realMatched = new Array(m).fill(false);
    const captures = {};
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (same(i, j) && table[i][j] === table[i + 1][j + 1] + 1) {
        linesMatch(documented[i], real[j], captures);
        docMatched[i] = realMatched[j] = true;
        i++;
        j++;
      } else if (table[i + 1][j] >= table[i][j + 1]) i++;
      else j++;
    }
    return { docMatched, realMatched, captures };
  }

  /* ------------------------------------------------------------ the panel */

  // The lines into a column; a stream's lines grouped one block per event, as the pages show them.
  function renderLines(pre, lines, matched) {
    const blocks = [];
    let event = null;
    lines.forEach((shown, k) => {
      const className = `${shown.label ? "mcpref-sse__label " : ""}mcpref-tryit__line${matched[k] ? "" : " mcpref-tryit__diff"}`;
      const span = el("span", { className }, shown.label ? shown.text : shown.text + "\n");
      if (shown.event < 0) {
        event = null;
        blocks.push(span);
        return;
      }
      if (!event || event.dataset.event !== String(shown.event)) {
        event = el("span", { className: "mcpref-sse__event" });
        event.dataset.event = String(shown.event);
        blocks.push(event);
      }
      event.append(span);
    });
    pre.replaceChildren(...blocks);
  }

  function attach(requestBlock, responseBlock) {
    const original = textOf(requestBlock);
    const documented = responseBlock ? textOf(responseBlock) : null;
    const run = el("button", { type: "button", className: "mcpref-tryit__run", textContent: "Run" });
    const edit = el("button", { type: "button", textContent: "Edit request" });
    const stop = el("button", { type: "button", textContent: "Stop", hidden: true });
    const editor = el("textarea", { className: "mcpref-tryit__editor", value: original, hidden: true, spellcheck: false });
    editor.rows = Math.min(original.split("\n").length + 1, 30);
    editor.setAttribute("aria-label", "The request to send");
    const status = el("p", { className: "mcpref-tryit__status" });
    status.setAttribute("role", "status");
    const where = el("p", { className: "mcpref-tryit__server", textContent: "Looking for a reference server …" });
    const other = el("button", { type: "button", className: "mcpref-tryit__other", textContent: "Use another address", hidden: true });
    const docPre = el("pre", { className: "mcpref-tryit__documented" });
    const realPre = el("pre", { className: "mcpref-tryit__real" });
    const columns = el(
      "div",
      { className: "mcpref-tryit__columns", hidden: true },
      el("div", {}, el("h4", { textContent: "Documented" }), docPre),
      el("div", {}, el("h4", { textContent: "This server" }), realPre),
    );
    const panel = el(
      "div",
      { className: "mcpref-tryit" },
      el("div", { className: "mcpref-tryit__bar" }, run, edit, stop, other),
      where,
      editor,
      status,
      columns,
    );
    panel.dataset.state = "idle";
    panel.dataset.server = "checking";
    requestBlock.after(panel);
    findServer().then((found) => {
      panel.dataset.server = found.kind;
      where.textContent = serverLine(found);
      other.hidden = found.kind === "site";
    });
    other.addEventListener("click", () => {
      const chosen = prompt("The address of your reference server (mcpref demo --port N):", localRoot().href);
      if (!chosen) return;
      localStorage.setItem(LOCAL_KEY, new URL(chosen).href);
      location.reload();
    });

    edit.addEventListener("click", () => {
      editor.hidden = !editor.hidden;
      edit.textContent = editor.hidden ? "Edit request" : "Hide request";
    });

    let controller = null;
    stop.addEventListener("click", () => controller && controller.abort());

    function show(real) {
      const doc = documented ? documentedParts(documented) : null;
      const realStatus = `HTTP/1.1 ${real.status} ${real.statusText}`.trim();
      const realHeaders = [];
      const shown = new Set();
      for (const line of doc ? doc.headers : []) {
        const name = line.split(":")[0].trim();
        const value = real.headers.get(name);
        shown.add(name.toLowerCase());
        realHeaders.push(value === null ? `(no ${name} header)` : `${name}: ${value}`);
      }
      const extra = [];
      real.headers.forEach((value, name) => shown.has(name) || extra.push(`${name}: ${value}`));
      const contentType = real.headers.get("content-type") || "";
      const realLines = [realStatus, ...realHeaders, ""].map((text) => shownLine(text)).concat(bodyLines(real.body, contentType, doc && doc.body));
      if (!doc) {
        renderLines(realPre, realLines, realLines.map(() => true));
        realPre.append(el("span", { className: "mcpref-tryit__extra" }, `\nOther headers:\n${extra.join("\n")}\n`));
        columns.hidden = false;
        return 0;
      }
      const docLines = [doc.statusLine, ...doc.headers, ""].map((text) => shownLine(text)).concat(bodyLines(doc.body, doc.contentType));
      const texts = (lines) => lines.map((shown) => shown.text);
      const { docMatched, realMatched, captures } = diff(texts(docLines), texts(realLines));
      renderLines(docPre, docLines, docMatched);
      renderLines(realPre, realLines, realMatched);
      if (extra.length) realPre.append(el("span", { className: "mcpref-tryit__extra" }, `\nOther headers:\n${extra.join("\n")}\n`));
      columns.hidden = false;
      Object.assign(captured, captures);
      return docMatched.filter((x) => !x).length + realMatched.filter((x) => !x).length;
    }

    function finish(state, message, differences) {
      panel.dataset.state = state;
      if (differences !== undefined) panel.dataset.differences = String(differences);
      status.textContent = message;
      run.disabled = false;
      stop.hidden = true;
    }

    run.addEventListener("click", async () => {
      const found = await findServer();
      const { filled, missing } = fillCaptured(editor.value);
      if (missing.length) {
        return finish(
          "needs-earlier",
          `This request carries {{${missing.join("}}, {{")}}}: run the earlier request whose response ` +
            "holds it first, and its real value is filled in here.",
        );
      }
      let request;
      try {
        request = parseRequest(filled);
      } catch (error) {
        return finish("error", String(error.message || error));
      }
      const url = resolve(request.target, found.root);
      const forbidden = request.headers.map(([name]) => name).filter((name) => FORBIDDEN_HEADER.test(name));
      if (forbidden.length) {
        finish("needs-curl", `A browser sends its own ${forbidden.join(" and ")}, so Run cannot send this request as the page shows it. Run it with curl: `);
        status.append(el("code", { className: "mcpref-tryit__curl", textContent: curlOf(request, url) }));
        return;
      }
      if (found.kind === "none") {
        return finish("no-server", `Run would send ${request.method} ${request.target} to ${url.href}; nothing answers there. ${START_HINT}`);
      }
      run.disabled = true;
      panel.dataset.state = "sending";
      panel.dataset.differences = "";
      status.textContent = `Sending ${request.method} ${request.target} …`;
      controller = new AbortController();
      const real = { status: 0, statusText: "", headers: new Headers(), body: "" };
      try {
        const response = await fetch(url, {
          method: request.method,
          headers: request.headers,
          body: ["GET", "HEAD"].includes(request.method) ? undefined : request.body,
          cache: "no-store",
          redirect: "manual",
          signal: controller.signal,
        });
        const contentType = response.headers.get("content-type") || "";
        const mcp = /application\/json|text\/event-stream/.test(contentType);
        if (!mcp && (response.status >= 400 || /text\/html/.test(contentType))) {
          return finish("no-server", `${url.href} answered ${response.status}, not as a reference server does. ${START_HINT}`);
        }
        Object.assign(real, { status: response.status, statusText: response.statusText, headers: response.headers });
        if (/text\/event-stream/.test(contentType) && response.body) {
          panel.dataset.state = "streaming";
          stop.hidden = false;
          status.textContent = "Streaming: events appear as they arrive.";
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            real.body += value;
            panel.dataset.events = String((real.body.match(/^data:/gm) || []).length);
            show(real);
          }
        } else {
          real.body = await response.text();
        }
        const differences = show(real);
        finish("done", differences ? `${differences} line(s) differ from the documented response (highlighted).` : "Matches the documented response.", differences);
      } catch (error) {
        if (error.name === "AbortError") {
          const differences = show(real);
          return finish("done", `Stopped. ${differences ? `${differences} line(s) differ (highlighted).` : "What arrived matches."}`, differences);
        }
        // The server answered this page's probe: the browser refused this one request, or it failed.
        finish("failed", `The browser refused ${request.method} ${url.href}, or the request failed (${error.message || error}); the browser's console says which.`);
      }
    });
  }

  const blocks = [...document.querySelectorAll(".md-typeset .language-http")];
  blocks.forEach((block, index) => {
    if (isIllustration(block)) return;
    const first = textOf(block).split("\n", 1)[0].trim();
    if (!REQUEST_LINE.test(first)) return;
    const next = blocks[index + 1];
    const response = next && !isIllustration(next) && /^HTTP\/1\.1 \d{3}/.test(textOf(next)) ? next : null;
    attach(block, response);
  });
})();
