/* The try-it console: a Run control under every executed request frame.
 *
 * Run sends the request a frame shows (edited first if the reader likes) to a reference server and
 * says whether the real response is the documented one: status, headers, body, SSE events as they
 * arrive. The page's frame already is the documented response, so a match shows nothing more than
 * the real answer behind a toggle; a difference shows the real answer, its differing lines marked,
 * then only the lines that differ with a little context. An edited request is another request: the
 * console shows the server's answer and compares nothing. What the console shows is folded where
 * the page's frames fold (the page's own folds, from tests/docs/folds.py, are the catalogue).
 * Placeholders in the documented response (`<<iso-datetime>>`) match any value; a named one
 * (`<<sealed-state:report_state>>`) keeps the real value, and a later request's `{{report_state}}`
 * is filled in with it, as the docs harness does (see docs/contributing.md).
 *
 * Which server: server.js's lookup, shared with the MCP Apps live view. Before any click, each
 * console says which one answers, or, when none does, the one command that starts it.
 */
(function () {
  "use strict";

  const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|OPTIONS|HEAD) (\S+) HTTP\/1\.1$/;
  const PLACEHOLDER = /<<([a-z0-9-]+)(?::([A-Za-z_][\w-]*))?>>/g;
  const captured = {}; // {{name}} -> the real value a named placeholder matched
  // mcpref is not on PyPI: a reader installs it from a clone, by path, as the README and Run it say.
  // The repository is the one the site names in its header (mkdocs.yml's repo_url).
  const REPOSITORY = document.querySelector("a.md-source")?.href || "the mcpref repository";
  const START_HINT =
    `No reference server answers. Start one on your machine from a clone: git clone ${REPOSITORY} then ` +
    'pip install "./mcpref[demo]" then mcpref demo (inside the clone, ./scripts/serve does too), and reload this page.';

  /* ------------------------------------------------------------ the server */

  const { resolve, localRoot, chooseLocal, find: findServer } = window.mcprefServer;
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

  // A line the console shows: its text (what is compared); for a stream's lines, which event it
  // belongs to and whether it is that event's label (its `event:`/`id:` fields); whether it is a
  // line of pretty-printed JSON, coloured as the pages colour it (site.js's JSON highlighting).
  const shownLine = (text, event = -1, label = false, json = false) => ({ text, event, label, json });

  // JSON laid out as the pages lay it out: indented by two; within `width`, an object or array stays
  // on one line (an event's data: tests/docs/streams.py, `pretty`, with WIDTH; a JSON body: 0, which
  // is JSON.stringify's layout). Besides the lines, each member laid over several of them:
  // {first, last, json}, `json` the member alone as compact JSON, so that the page's folds are
  // found in what the console shows whatever its layout.
  const WIDTH = 60;
  const flat = (value) =>
    Array.isArray(value) ? `[${value.map(flat).join(", ")}]`
    : value && typeof value === "object" ? `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${flat(v)}`).join(", ")}}`
    : JSON.stringify(value);
  function pretty(value, width) {
    const lines = [];
    const members = [];
    const put = (item, indent, name, comma) => {
      const one = flat(item);
      if (!item || typeof item !== "object" || !Object.keys(item).length || indent.length + name.length + one.length <= width) {
        lines.push(indent + name + one + comma);
        return;
      }
      const array = Array.isArray(item);
      const entries = array ? item.map((inner) => [null, inner]) : Object.entries(item);
      lines.push(indent + name + (array ? "[" : "{"));
      entries.forEach(([key, inner], k) => {
        const first = lines.length;
        put(inner, indent + "  ", key === null ? "" : `${JSON.stringify(key)}: `, k < entries.length - 1 ? "," : "");
        if (key !== null && lines.length - first > 1) members.push({ first, last: lines.length - 1, json: JSON.stringify({ [key]: inner }) });
      });
      lines.push(indent + (array ? "]" : "}") + comma);
    };
    put(value, "", "", "");
    return { lines, members };
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

  // Body lines for display and comparison, and their members (see `pretty`): JSON pretty-printed;
  // a stream one event per block, its data pretty-printed; in the documented key order (for a
  // stream, that of the documented event in the same place).
  function bodyLines(body, contentType, guide) {
    const lines = [];
    const members = [];
    const add = (value, width, event) => {
      const laid = pretty(value, width);
      const at = lines.length;
      members.push(...laid.members.map((m) => ({ ...m, first: m.first + at, last: m.last + at })));
      lines.push(...laid.lines.map((text) => shownLine(text, event, false, true)));
    };
    if (!body) return { lines, members };
    if (/event-stream/.test(contentType)) {
      const guides = streamEvents(guide || "").map((event) => tryJSON(event.data.join("\n")));
      streamEvents(body).forEach((event, index) => {
        if (event.fields.length) lines.push(shownLine(event.fields.join("  "), index, true));
        const data = event.data.length ? tryJSON(event.data.join("\n")) : null;
        const g = guides[index];
        if (data && data.ok) add(g && g.ok ? ordered(data.value, g.value) : data.value, WIDTH, index);
        else lines.push(...event.data.map((text) => shownLine(`data: ${text}`, index)));
        lines.push(...event.other.map((text) => shownLine(text, index)));
      });
      return { lines, members };
    }
    const parsed = tryJSON(body);
    if (!parsed.ok) return { lines: body.split("\n").map((text) => shownLine(text)), members };
    const g = guide === undefined ? { ok: false } : tryJSON(guide);
    add(g.ok ? ordered(parsed.value, g.value) : parsed.value, 0, -1);
    return { lines, members };
  }

  function documentedParts(text) {
    const [head, ...rest] = text.split(/\n\n/);
    const [statusLine, ...headerLines] = head.split("\n");
    const headers = headerLines.filter((l) => l.includes(":"));
    const contentType = (headers.find((h) => /^content-type:/i.test(h)) || "").split(":").slice(1).join(":").trim();
    return { statusLine, headers, body: rest.join("\n\n"), contentType };
  }

  // Longest common subsequence over lines: the documented and real lines in one sequence of
  // operations, each line "same" (both sides, matched), "documented" (only there) or "real".
  function diff(documented, real) {
    const n = documented.length;
    const m = real.length;
    const scratch = {};
    const same = (i, j) => linesMatch(documented[i], real[j], scratch);
    const table = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        table[i][j] = same(i, j) ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    const ops = [];
    const captures = {};
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (same(i, j) && table[i][j] === table[i + 1][j + 1] + 1) {
        linesMatch(documented[i], real[j], captures);
        ops.push({ kind: "same", i: i++, j: j++ });
      } else if (table[i + 1][j] >= table[i][j + 1]) ops.push({ kind: "documented", i: i++ });
      else ops.push({ kind: "real", j: j++ });
    }
    while (i < n) ops.push({ kind: "documented", i: i++ });
    while (j < m) ops.push({ kind: "real", j: j++ });
    return { ops, captures };
  }

  /* ------------------------------------------------------------ folds */

  // The page's own folds, as a catalogue: each folded JSON member (compact, as `pretty` notes
  // members) and its label. tests/docs/folds.py decides what folds and frames_hook.py wraps it in
  // the built page; the console folds the same members in what it shows, so the rules stay in that
  // one place and a real answer reads like the page's frames.
  let catalogue = null;
  function pageFolds() {
    if (catalogue) return catalogue;
    catalogue = new Map();
    for (const fold of document.querySelectorAll(".md-typeset .mcpref-fold")) {
      const label = fold.querySelector(":scope > .mcpref-fold__toggle")?.dataset.label;
      const body = fold.querySelector(":scope > .mcpref-fold__body");
      if (!label || !body || fold.closest(".mcpref-tryit")) continue;
      const member = tryJSON(`{${body.textContent.trim().replace(/,$/, "")}}`); // a fold of headers is none
      if (member.ok && Object.keys(member.value).length === 1) catalogue.set(JSON.stringify(member.value), label);
    }
    return catalogue;
  }

  // Which of `members` the page would fold: [{first, last, label}] in order, the outermost of
  // nested ones, over lines that are all `foldable` (a line that differs from the documented
  // response is never folded away).
  function foldsIn(members, foldable) {
    const known = pageFolds();
    const found = [];
    const candidates = members.filter((m) => known.has(m.json)).sort((a, b) => a.first - b.first || b.last - a.last);
    for (const member of candidates) {
      if (found.length && member.first <= found[found.length - 1].last) continue;
      if (foldable.slice(member.first, member.last + 1).every(Boolean)) found.push({ first: member.first, last: member.last, label: known.get(member.json) });
    }
    return found;
  }

  // A fold as frames_hook.py writes one (frames.js opens it, frames.css hides its body).
  function foldNode(label, ...body) {
    const toggle = el("button", { type: "button", className: "mcpref-fold__toggle" });
    toggle.setAttribute("aria-expanded", "false");
    toggle.setAttribute("aria-label", `${label} (show)`);
    toggle.dataset.label = label;
    return el("span", { className: "mcpref-fold" }, toggle, el("span", { className: "mcpref-fold__body" }, ...body));
  }

  /* ------------------------------------------------------------ the panel */

  // A line as a span, its JSON coloured as the pages colour it (site.js's highlighting).
  function lineNode(shown, marked, text = shown.text, end = shown.label ? "" : "\n") {
    const colour = shown.json && window.mcprefJSONFragment;
    const className = `${shown.label ? "mcpref-sse__label " : ""}mcpref-tryit__line${marked ? " mcpref-tryit__diff" : ""}`;
    return el("span", { className }, ...(colour ? colour(text) : [text]), end);
  }

  // The lines into `pre`: `marked` ones highlighted, `folds` ([{first, last, label}], in order)
  // folded, the indentation of a fold's first line left outside it as the page does; a stream's
  // lines grouped one block per event, as the pages show them.
  function renderLines(pre, lines, marked, folds) {
    const items = []; // [event, nodes]
    for (let k = 0, f = 0; k < lines.length; ) {
      const fold = folds[f];
      if (fold && fold.first === k) {
        const run = lines.slice(fold.first, fold.last + 1);
        const indent = /^ */.exec(run[0].text)[0];
        const body = run.map((shown, i) =>
          lineNode(shown, false, i ? shown.text : shown.text.slice(indent.length), i < run.length - 1 ? "\n" : ""),
        );
        items.push([run[0].event, [indent, foldNode(fold.label, ...body), "\n"]]);
        k = fold.last + 1;
        f++;
      } else {
        items.push([lines[k].event, [lineNode(lines[k], marked[k])]]);
        k++;
      }
    }
    const blocks = [];
    let event = null;
    for (const [index, nodes] of items) {
      if (index < 0) {
        event = null;
        blocks.push(...nodes);
        continue;
      }
      if (!event || event.dataset.event !== String(index)) {
        event = el("span", { className: "mcpref-sse__event" });
        event.dataset.event = String(index);
        blocks.push(event);
      }
      event.append(...nodes);
    }
    pre.replaceChildren(...blocks);
  }

  // Only what differs: each differing line, documented (−) or real (+), with CONTEXT matching lines
  // around it; the matching lines between are counted, not shown.
  const CONTEXT = 2;
  function renderComparison(pre, ops, docLines, realLines) {
    const near = ops.map((op, k) =>
      ops.slice(Math.max(0, k - CONTEXT), k + CONTEXT + 1).some((other) => other.kind !== "same"),
    );
    const nodes = [];
    let skipped = 0;
    const flush = () => {
      if (skipped) nodes.push(el("span", { className: "mcpref-tryit__skipped" }, `⋯ ${skipped} matching line${skipped === 1 ? "" : "s"}\n`));
      skipped = 0;
    };
    ops.forEach((op, k) => {
      if (!near[k]) return void skipped++;
      flush();
      const text = op.kind === "documented" ? docLines[op.i].text : realLines[op.j].text;
      nodes.push(el("span", { className: `mcpref-tryit__line mcpref-tryit__line--${op.kind}` }, text + "\n"));
    });
    flush();
    pre.replaceChildren(...nodes);
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
    // The real answer first (behind a toggle when it is the documented one), then what differs.
    // `highlight`: Material's token colours apply under it (the JSON lines are coloured).
    const realPre = el("pre", { className: "mcpref-tryit__real highlight" });
    const summary = el("summary", { textContent: "The server's answer" });
    const answer = el("details", { className: "mcpref-tryit__answer", hidden: true }, summary, realPre);
    const comparisonPre = el("pre", { className: "mcpref-tryit__comparison" });
    const comparison = el(
      "div",
      { className: "mcpref-tryit__differences", hidden: true },
      el("h4", { textContent: "Where it differs from the documented response (− documented, + this server)" }),
      comparisonPre,
    );
    const panel = el(
      "div",
      { className: "mcpref-tryit" },
      el("div", { className: "mcpref-tryit__bar" }, run, edit, stop, other),
      where,
      editor,
      status,
      answer,
      comparison,
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
      chooseLocal(chosen);
      location.reload();
    });

    edit.addEventListener("click", () => {
      editor.hidden = !editor.hidden;
      edit.textContent = editor.hidden ? "Edit request" : "Hide request";
    });

    let controller = null;
    stop.addEventListener("click", () => controller && controller.abort());

    // Shows the real answer so far; compared with the documented one unless the request was
    // edited. The number of differing lines, or null when nothing was compared.
    function show(real, compare, final) {
      const doc = documented ? documentedParts(documented) : null;
      // The headers the documented response shows, in its order; the others folded after them.
      const named = doc ? doc.headers.map((line) => line.split(":")[0].trim()) : ["Content-Type"];
      const heads = [];
      for (const name of named) {
        const value = real.headers.get(name);
        if (value !== null) heads.push(`${name}: ${value}`);
        else if (compare) heads.push(`(no ${name} header)`);
      }
      const lower = new Set(named.map((name) => name.toLowerCase()));
      const extra = [];
      real.headers.forEach((value, name) => lower.has(name) || extra.push(`${name}: ${value}`));
      const head = [`HTTP/1.1 ${real.status} ${real.statusText}`.trim(), ...heads].map((text) => shownLine(text));
      const body = bodyLines(real.body, real.headers.get("content-type") || "", doc && doc.body);
      const realLines = [...head, shownLine(""), ...body.lines];
      const marked = realLines.map(() => false);
      let differences = null;
      if (doc) {
        const docLines = [doc.statusLine, ...doc.headers, ""].map((text) => shownLine(text)).concat(bodyLines(doc.body, doc.contentType).lines);
        const texts = (lines) => lines.map((shown) => shown.text);
        const { ops, captures } = diff(texts(docLines), texts(realLines));
        Object.assign(captured, captures); // an edited first round still feeds the next one
        if (compare) {
          marked.fill(true);
          ops.forEach((op) => op.kind === "same" && (marked[op.j] = false));
          differences = ops.filter((op) => op.kind !== "same").length;
          if (final && differences) renderComparison(comparisonPre, ops, docLines, realLines);
        }
      }
      comparison.hidden = !(final && differences);
      // Shown: the headers the page shows, the others in a fold of their own, the body folded
      // where the page's frames fold.
      const lines = [...head, ...extra.map((text) => shownLine(text)), ...realLines.slice(head.length)];
      const marks = [...marked.slice(0, head.length), ...extra.map(() => false), ...marked.slice(head.length)];
      const at = head.length + extra.length + 1;
      const members = body.members.map((m) => ({ ...m, first: m.first + at, last: m.last + at }));
      const folds = foldsIn(members, marks.map((m) => !m));
      if (extra.length) {
        const label = `… ${extra.length} more header${extra.length === 1 ? "" : "s"} the page leaves out`;
        folds.push({ first: head.length, last: head.length + extra.length - 1, label });
        folds.sort((a, b) => a.first - b.first);
      }
      renderLines(realPre, lines, marks, folds);
      answer.hidden = false;
      summary.textContent =
        differences === null ? "The server's answer"
        : differences ? "The server's answer, the lines that differ marked"
        : "The server's answer, as documented";
      if (final) answer.open = differences !== 0;
      return differences;
    }

    function finish(state, message, differences) {
      panel.dataset.state = state;
      panel.dataset.differences = differences === undefined || differences === null ? "" : String(differences);
      status.textContent = message;
      run.disabled = false;
      stop.hidden = true;
    }
    const verdict = (differences, prefix = "") =>
      differences === null
        ? `${prefix}${documented === null ? "The server's answer (the page documents none for this request)." : "Edited request: the server's answer."}`
      : differences ? `${prefix}${differences} line(s) differ from the documented response.`
      : `${prefix}${prefix ? "What arrived matches" : "Matches the documented response"}.`;

    run.addEventListener("click", async () => {
      const found = await findServer();
      const compare = documented !== null && editor.value.trim() === original.trim();
      const { filled, missing } = fillCaptured(editor.value);
      answer.hidden = comparison.hidden = true;
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
        // The console's line above already says how to start one.
        return finish("no-server", `Run would send ${request.method} ${request.target} to ${url.href}; nothing answers there.`);
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
          answer.open = true;
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            real.body += value;
            panel.dataset.events = String((real.body.match(/^data:/gm) || []).length);
            show(real, compare, false);
          }
        } else {
          real.body = await response.text();
        }
        const differences = show(real, compare, true);
        finish("done", verdict(differences), differences);
      } catch (error) {
        if (error.name === "AbortError") {
          const differences = show(real, compare, true);
          return finish("done", verdict(differences, "Stopped. "), differences);
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
