/* The site's behaviour on top of Material: diagrams, SSE streams, copy buttons, search queries.
 *
 * Loaded after Material's bundle, at the end of <body>, so the page above is already parsed when
 * this runs. The browser tests (tests/browser/) check each part in Chromium. */
(function () {
  "use strict";

  /* ---------------------------------------------------------------- diagrams
   * mkdocs-mermaid2-plugin turns each ```mermaid block into a <div class="mermaid"> and, on the
   * pages that have one, imports the site's pinned mermaid (its ESM build) and initializes it with
   * the settings in mkdocs.yml (startOnLoad off). This add-on draws them with that mermaid, in the
   * reader's palette (mermaid's own default and dark themes, redrawn when the palette toggles), and
   * does what neither does: a diagram is fitted to the column but never drawn under MIN_TEXT_PX
   * (one that would need to be scrolls sideways in its figure, with an Expand control that shows it
   * whole), a failed diagram shows its source and the reason in place, and each drawn diagram has
   * an accessible name of its own (its accTitle, else its kind and the section it is in, numbered
   * where two in one section would share it).
   */
  const MIN_TEXT_PX = 12;
  const MERMAID = new URL("vendor/mermaid/mermaid.esm.min.mjs", document.currentScript.src);
  const diagrams = [];
  let sequence = 0;

  function sectionOf(node) {
    for (let at = node; at; at = at.previousElementSibling || at.parentElement) {
      if (/^H[1-4]$/.test(at.tagName)) return at.textContent.replace(/¶$/, "").trim();
    }
    return document.title;
  }

  for (const source of document.querySelectorAll(".md-typeset div.mermaid")) {
    const figure = document.createElement("figure");
    figure.className = "mcpref-diagram";
    const bar = document.createElement("div");
    bar.className = "mcpref-diagram__bar";
    const canvas = document.createElement("div");
    canvas.className = "mcpref-diagram__canvas";
    canvas.tabIndex = 0; // a diagram that scrolls can be scrolled from the keyboard
    figure.append(bar, canvas);
    const holder = source.parentElement.matches("[data-search-exclude]") ? source.parentElement : source;
    const text = source.textContent;
    const kind = /^\s*sequenceDiagram/.test(text) ? "Sequence diagram" : /^\s*(flowchart|graph)/.test(text) ? "Flowchart" : "Diagram";
    const title = /^\s*accTitle\s*:\s*(.+)$/m.exec(text);
    const name = title ? title[1].trim() : `${kind}: ${sectionOf(holder)}`;
    holder.replaceWith(figure);
    diagrams.push({ figure, bar, canvas, source: text, name, minText: 16 });
  }
  // Two diagrams in one section (without an accTitle of their own) would share a name: numbered.
  const sharing = diagrams.map((diagram) => diagrams.filter((other) => other.name === diagram.name));
  diagrams.forEach((diagram, i) => {
    if (sharing[i].length > 1) diagram.name += ` (${sharing[i].indexOf(diagram) + 1} of ${sharing[i].length})`;
  });

  const isDark = () => document.body.getAttribute("data-md-color-scheme") === "slate";

  /* The plugin's settings (mkdocs.yml), read once: what its initialize() changed from mermaid's
   * defaults (mermaid keeps no copy of what it was given). The palette's theme goes on top. */
  function changed(value, base) {
    if (!value || typeof value !== "object" || Array.isArray(value)) return JSON.stringify(value) === JSON.stringify(base) ? undefined : value;
    const out = {};
    for (const [key, inner] of Object.entries(value)) {
      const kept = changed(inner, base && typeof base === "object" ? base[key] : undefined);
      if (kept !== undefined) out[key] = kept;
    }
    return Object.keys(out).length ? out : undefined;
  }
  let pluginConfig = null;
  function mermaidConfig(mermaid) {
    if (!pluginConfig) {
      pluginConfig = changed(mermaid.mermaidAPI.getSiteConfig(), mermaid.mermaidAPI.defaultConfig) || {};
      delete pluginConfig.theme;
      delete pluginConfig.themeVariables;
    }
    const dark = isDark();
    return {
      ...pluginConfig,
      theme: dark ? "dark" : "default",
      fontFamily: getComputedStyle(document.body).fontFamily,
      // mermaid's dark theme leaves notes and labels under WCAG AA on its own background, and a
      // flowchart's edge labels too (#ccc on #585858, 4.4:1).
      themeVariables: dark
        ? { background: "#1e2129", noteBkgColor: "#3b3f4e", noteTextColor: "#f0f0f0", labelTextColor: "#f0f0f0", edgeLabelBackground: "#3b3f4e" }
        : {},
    };
  }

  function smallestText(svg) {
    let smallest = Infinity;
    for (const el of svg.querySelectorAll("text, tspan, foreignObject span, foreignObject div, foreignObject p")) {
      if (!el.textContent.trim()) continue;
      const size = parseFloat(getComputedStyle(el).fontSize);
      if (size > 0) smallest = Math.min(smallest, size);
    }
    return Number.isFinite(smallest) ? smallest : 16;
  }

  /* Fit a drawn diagram (in its figure, or its copy in the Expand dialog) to the width it has, but
   * never below MIN_TEXT_PX. Its scale. */
  function fit(diagram, svg, available) {
    const box = svg.viewBox.baseVal;
    const width = box && box.width ? box.width : svg.getBBox().width;
    const height = box && box.height ? box.height : svg.getBBox().height;
    const scale = Math.max(Math.min(1, (available || width) / width), MIN_TEXT_PX / diagram.minText);
    svg.removeAttribute("height");
    svg.style.maxWidth = "none";
    svg.style.width = `${width * scale}px`;
    svg.style.height = `${height * scale}px`;
    return scale;
  }

  function layout(diagram) {
    const svg = diagram.canvas.querySelector("svg");
    if (!svg) return;
    const scale = fit(diagram, svg, diagram.canvas.clientWidth);
    // Cut at the column's edge (a phone): it says so, beside a prominent Expand.
    const cramped = svg.getBoundingClientRect().width > diagram.canvas.clientWidth + 1;
    diagram.figure.classList.toggle("mcpref-diagram--wide", cramped);
    diagram.hint.hidden = !cramped;
    diagram.expand.hidden = !cramped && scale >= 1;
    if (diagram.dialog) fitExpanded(diagram, diagram.dialog);
  }

  /* The dialog's copy, fitted to the dialog; where it is still too wide, the hint says how to see
   * the rest: scroll, or turn the phone (the longer side of the window, if the diagram fits it). */
  function fitExpanded(diagram, dialog) {
    const body = dialog.querySelector(".mcpref-dialog__body");
    const svg = body.querySelector("svg");
    fit(diagram, svg, body.clientWidth);
    const width = svg.getBoundingClientRect().width;
    const hint = dialog.querySelector(".mcpref-dialog__hint");
    hint.hidden = width <= body.clientWidth + 1;
    const turned = window.innerHeight > window.innerWidth && width <= window.innerHeight - (window.innerWidth - body.clientWidth);
    hint.textContent = turned ? "Scroll it both ways, or turn the phone sideways to see its whole width." : "Scroll it both ways to see all of it.";
  }

  /* The diagram on its own, in a dialog that fills a phone's screen: fitted to its width where the
   * text stays at MIN_TEXT_PX or more, else at that size, scrolling both ways; fitted again when
   * the phone turns. Close is a full-size touch target, above the part that scrolls. */
  function openExpanded(diagram) {
    const dialog = document.createElement("dialog");
    dialog.className = "mcpref-dialog";
    dialog.setAttribute("aria-label", diagram.name);
    const head = document.createElement("div");
    head.className = "mcpref-dialog__head";
    const title = document.createElement("p");
    title.className = "mcpref-dialog__title";
    title.textContent = diagram.name;
    const close = document.createElement("button");
    close.type = "button";
    close.className = "mcpref-dialog__close";
    close.textContent = "Close";
    close.addEventListener("click", () => dialog.close());
    head.append(title, close);
    const hint = document.createElement("p");
    hint.className = "mcpref-dialog__hint";
    const body = document.createElement("div");
    body.className = "mcpref-dialog__body";
    body.tabIndex = 0; // scrolled from the keyboard too
    const svg = diagram.canvas.querySelector("svg").cloneNode(true);
    body.append(svg);
    dialog.append(head, hint, body);
    dialog.addEventListener("close", () => {
      diagram.dialog = null;
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
    diagram.dialog = dialog;
    fitExpanded(diagram, dialog);
  }

  /* Where the diagram should have been: the reason, and the source it could not draw. */
  function showFailure(diagram, reason) {
    diagram.canvas.replaceChildren();
    const message = document.createElement("p");
    message.className = "mcpref-diagram__error";
    message.textContent = `This diagram could not be drawn: ${reason}`;
    const source = document.createElement("pre");
    source.textContent = diagram.source;
    diagram.canvas.append(message, source);
    diagram.figure.dataset.rendered = "error";
  }

  async function render(mermaid, diagram) {
    const id = `mcpref-diagram-${++sequence}`;
    try {
      await mermaid.parse(diagram.source);
      const { svg, bindFunctions } = await mermaid.render(id, diagram.source);
      diagram.canvas.innerHTML = svg;
      if (bindFunctions) bindFunctions(diagram.canvas);
      const drawn = diagram.canvas.querySelector("svg");
      drawn.setAttribute("role", "img");
      // The name is ours (an accTitle, else the kind and section), numbered where two would share it.
      drawn.removeAttribute("aria-labelledby");
      drawn.setAttribute("aria-label", diagram.name);
      diagram.minText = smallestText(drawn);
      diagram.figure.dataset.rendered = "ok";
      layout(diagram);
    } catch (error) {
      // Never leave mermaid's "Syntax error" graphic at the bottom of the page.
      document.getElementById(`d${id}`)?.remove();
      document.getElementById(id)?.remove();
      showFailure(diagram, error.message || error);
      console.error("diagram failed to render", error);
    }
  }

  /* Draw every diagram in the current palette's colours. The root element says how far it got
   * (data-diagrams="rendering"/"ready", data-diagrams-palette), for the browser tests. */
  let drawnIn = null;
  async function renderAll(mermaid) {
    const scheme = document.body.getAttribute("data-md-color-scheme");
    if (scheme === drawnIn) return;
    drawnIn = scheme;
    const root = document.documentElement.dataset;
    root.diagrams = "rendering";
    if (diagrams.length) mermaid.initialize(mermaidConfig(mermaid));
    for (const diagram of diagrams) await render(mermaid, diagram); // one at a time: mermaid is not reentrant
    if (drawnIn !== scheme) return; // the palette changed meanwhile; that run finishes the job
    root.diagrams = "ready";
    root.diagramsPalette = scheme;
  }

  for (const diagram of diagrams) {
    const hint = document.createElement("span");
    hint.className = "mcpref-diagram__hint";
    hint.textContent = "Wider than the screen: scroll it sideways, or";
    hint.hidden = true;
    const expand = document.createElement("button");
    expand.type = "button";
    expand.textContent = "Expand diagram";
    expand.hidden = true;
    expand.addEventListener("click", () => openExpanded(diagram));
    diagram.bar.append(hint, expand);
    diagram.hint = hint;
    diagram.expand = expand;
  }

  document.addEventListener("DOMContentLoaded", async () => {
    // The plugin's module script has run by now (module scripts run before DOMContentLoaded);
    // importing the same URL gives the same, initialized, mermaid.
    let mermaid = null;
    if (diagrams.length) {
      try {
        mermaid = (await import(MERMAID.href)).default;
      } catch (error) {
        const reason = `mermaid did not load from ${MERMAID.pathname} (${error.message || error}); the site build provides it (overrides/vendor_mermaid.py)`;
        diagrams.forEach((diagram) => showFailure(diagram, reason));
        console.error(reason);
        document.documentElement.dataset.diagrams = "ready";
        return;
      }
    }
    renderAll(mermaid);
    // The palette toggle: draw again in the other palette's colours.
    new MutationObserver(() => renderAll(mermaid)).observe(document.body, {
      attributes: true,
      attributeFilter: ["data-md-color-scheme"],
    });
    let pending = 0;
    window.addEventListener("resize", () => {
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(() => diagrams.forEach(layout));
    });
  });

  /* ---------------------------------------------------------------- SSE streams
   * A stream has no lexer (a ```sse block, or the body of an HTTP frame whose Content-Type is
   * text/event-stream), so its lines reached the reader as plain text, and a compact JSON `data:`
   * line wrapped at the column's edge, mid-token. Each field line is highlighted here with
   * Pygments' own token classes (the colours Material gives every other frame), and a `data:`
   * line's JSON gets a break opportunity (<wbr>, which copies as nothing) after each `,` `:` `{`
   * `[`, so it wraps between tokens. The text itself is untouched: copy and the console read it
   * as written. A stream shown on its own is marked to wrap like the HTTP frames (site.css). */
  const SSE_FIELD = /^(data|event|id|retry)(:)( ?)(.*)$/;
  const JSON_TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b|([{}[\],:])|([^"{}[\],:\d-]+|[\s\S])/g;
  const token = (className, text) => Object.assign(document.createElement("span"), { className, textContent: text });

  // The try-it console (try-it.js) colours the JSON lines of a real response with it, too.
  window.mcprefJSONFragment = (text) => jsonFragment(text);

  function jsonFragment(text) {
    const out = [];
    for (const m of text.matchAll(JSON_TOKEN)) {
      const [, string, colon, number, literal, punctuation, other] = m;
      if (string) {
        out.push(token(colon ? "nt" : "s2", string));
        if (colon) out.push(token("p", colon), document.createElement("wbr"));
      } else if (number) out.push(token(/[.eE]/.test(number) ? "mf" : "mi", number));
      else if (literal) out.push(token("kc", literal));
      else if (punctuation) out.push(token("p", punctuation), document.createElement("wbr"));
      else out.push(other);
    }
    return out;
  }

  function streamLine(line) {
    if (line.startsWith(":")) return [token("c", line)]; // an SSE comment
    const m = SSE_FIELD.exec(line);
    if (!m) return [line];
    const [, name, colon, space, value] = m;
    const shown = [token("na", name), token("o", colon), space];
    if (name === "data" && /^[[{]/.test(value)) {
      const data = token("mcpref-sse-data", "");
      data.append(...jsonFragment(value));
      shown.push(data);
    } else shown.push(token(name === "event" ? "l" : "m", value));
    return shown;
  }

  for (const code of document.querySelectorAll(".md-typeset pre > code")) {
    if (!/^data: /m.test(code.textContent)) continue;
    code.parentElement.classList.add("mcpref-wrap");
    // The lines are text right in the block (a stream, an HTTP frame's body) or a console's output
    // lines (Pygments' `go` spans).
    const texts = [...code.childNodes, ...[...code.querySelectorAll(":scope > .go")].map((span) => span.firstChild)];
    for (const node of texts) {
      if (!node || node.nodeType !== Node.TEXT_NODE || !/^(data|event|id|retry):|^:/m.test(node.data)) continue;
      const lines = node.data.split("\n");
      const fragment = document.createDocumentFragment();
      lines.forEach((line, i) => {
        fragment.append(...streamLine(line));
        if (i < lines.length - 1) fragment.append("\n");
      });
      node.replaceWith(fragment);
    }
  }

  /* ---------------------------------------------------------------- copy buttons
   * Material copies a block's text, or its data-copy attribute when there is one. A shell session
   * (`$ command`, then its output) copies as just the commands, without the `$`, ready to paste. */
  for (const code of document.querySelectorAll(".language-console pre > code, .language-shell pre > code")) {
    const lines = code.textContent.split("\n");
    const commands = [];
    let continuing = false;
    for (const line of lines) {
      if (line.startsWith("$ ")) {
        commands.push(line.slice(2));
      } else if (continuing) {
        commands.push(line);
      } else {
        continue;
      }
      continuing = line.trimEnd().endsWith("\\");
    }
    if (commands.length) code.parentElement.dataset.copy = commands.join("\n");
  }

  /* ---------------------------------------------------------------- search
   * The search index reads `-` as "leave out pages with this word", so an error code as written,
   * `-32020`, found every page but the right one. A `-` in front of a number is part of the
   * number here; lunr's separator already indexes `-32020` as `32020`. Material hands each query to
   * its search worker as {type: 2, data: query}. */
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (message && message.type === 2 && typeof message.data === "string") {
      message = { ...message, data: message.data.replace(/(^|\s)-(?=\d)/g, "$1") };
    }
    return post.call(this, message, ...rest);
  };
})();
