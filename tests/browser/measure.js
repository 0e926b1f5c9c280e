// Run in the page by tests/browser/conftest.py: measures what a reader of this page sees.
// Returns plain JSON; the tests decide what is acceptable. With `withContrast` false, diagram labels'
// contrast (a label-by-label scroll, the slow part) is left out: colours follow the palette, not
// the width, so conftest.py measures it at one width per palette. With `withExpand` (on a phone),
// each diagram that has an Expand control is opened and what the dialog shows is measured.
async ({ withContrast, withExpand }) => {
  const parse = (css) => {
    const m = /rgba?\(([^)]+)\)/.exec(css || "");
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const blend = (fg, bg) => [0, 1, 2].map((i) => fg[i] * fg[3] + bg[i] * (1 - fg[3])).concat(1);
  const luminance = (c) => {
    const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const pageBackground = parse(getComputedStyle(document.body).backgroundColor) || [255, 255, 255, 1];
  const SHAPES = new Set(["rect", "polygon", "circle", "ellipse", "path"]);

  // The colour behind a point: the first painted shape or box under it, over the page; then the
  // backgrounds of the HTML boxes a label sits in (its own and its parents' in a foreignObject:
  // a flowchart's edge label paints its own background), each over the one below.
  const backgroundAt = (x, y, self) => {
    let behind = pageBackground;
    for (const el of self.getRootNode().elementsFromPoint(x, y)) {
      if (el === self || self.contains(el) || el.contains(self)) continue;
      const style = getComputedStyle(el);
      let colour = null;
      if (el instanceof SVGElement) {
        if (SHAPES.has(el.tagName) && style.fill !== "none") colour = parse(style.fill);
        if (colour && style.fillOpacity) colour[3] *= Number(style.fillOpacity);
      } else {
        colour = parse(style.backgroundColor);
      }
      if (colour && colour[3] > 0.05) {
        behind = blend(colour, pageBackground);
        break;
      }
    }
    const boxes = [];
    for (let at = self; at && !(at instanceof SVGElement); at = at.parentElement) boxes.unshift(at);
    for (const box of boxes) {
      const colour = parse(getComputedStyle(box).backgroundColor);
      if (colour && colour[3] > 0) behind = blend(colour, behind);
    }
    return behind;
  };

  // Our diagrams (site.js), and any drawn into a shadow root by another renderer (Material's own
  // draws into closed roots; conftest.py opens them), so a regression to it is measured too.
  const drawn = [...document.querySelectorAll("figure.mcpref-diagram")]
    .map((figure) => ({ figure, svg: figure.querySelector(".mcpref-diagram__canvas > svg") }))
    .concat(
      [...document.querySelectorAll("div.mermaid")]
        .filter((host) => host.shadowRoot)
        .map((host) => ({ figure: null, svg: host.shadowRoot.querySelector("svg") })),
    );
  const contentWidth = (el) => {
    const style = getComputedStyle(el);
    return el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  };
  // The contrast of a control's text on its own background, else the page's (the dialog has the
  // page's background too).
  const textContrast = (el) => {
    const style = getComputedStyle(el);
    const own = parse(style.backgroundColor);
    const bg = own && own[3] > 0.05 ? blend(own, pageBackground) : pageBackground;
    return Number(ratio(blend(parse(style.color), bg), bg).toFixed(2));
  };
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const smallestText = (svg) => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const sizes = [...svg.querySelectorAll("text, foreignObject span, foreignObject p")]
      .filter((el) => el.textContent.trim() && !el.querySelector("span, p, tspan"))
      .map((el) => parseFloat(getComputedStyle(el).fontSize) * scale);
    return sizes.length ? Math.min(...sizes) : null;
  };
  // What Expand shows: the dialog's extent, its copy's smallest text, whether every edge of the
  // diagram can be scrolled into view, and the Close button; closed again with that button.
  const expanded = async (button) => {
    button.click();
    await frame();
    const dialog = document.querySelector("dialog.mcpref-dialog[open]");
    if (!dialog) return { opened: false };
    const body = dialog.querySelector(".mcpref-dialog__body");
    const copy = body.querySelector("svg");
    const close = dialog.querySelector(".mcpref-dialog__close");
    const inside = (r, box) => r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
    const d = dialog.getBoundingClientRect();
    const c = close.getBoundingClientRect();
    const edges = [];
    for (const [left, top] of [[0, 0], [body.scrollWidth, body.scrollHeight]]) {
      body.scrollTo(left, top);
      const s = copy.getBoundingClientRect();
      const box = body.getBoundingClientRect();
      edges.push(left ? s.right <= box.right + 1 && s.bottom <= box.bottom + 1 : s.left >= box.left - 1 && s.top >= box.top - 1);
    }
    const hint = dialog.querySelector(".mcpref-dialog__hint");
    const facts = {
      opened: true,
      fillsWindow: d.left <= 0.5 && d.top <= 0.5 && d.right >= innerWidth - 0.5 && d.bottom >= innerHeight - 0.5,
      minTextPx: smallestText(copy),
      fitsWidth: copy.getBoundingClientRect().width <= body.clientWidth + 1,
      everyEdgeReachable: edges.every(Boolean),
      closePx: [c.width, c.height],
      closeInView: inside(c, { left: 0, top: 0, right: innerWidth, bottom: innerHeight }),
      hint: hint.hidden ? null : hint.textContent,
      contrast: [hint, close].filter((el) => el.getClientRects().length).map(textContrast),
      name: dialog.getAttribute("aria-label"),
    };
    close.click();
    for (let i = 0; i < 50 && document.querySelector("dialog.mcpref-dialog"); i++) await new Promise((r) => setTimeout(r, 10));
    facts.closed = !document.querySelector("dialog.mcpref-dialog");
    return facts;
  };
  const diagrams = [];
  for (const { figure, svg } of drawn) {
    const entry = {
      rendered: figure ? figure.dataset.rendered || "none" : "by another renderer",
      expand: figure ? !figure.querySelector(".mcpref-diagram__bar button").hidden : false,
      minTextPx: null,
      sequenceNumberPx: null, // the smallest step number of a sequence diagram (autonumber)
      // As drawn, at full size, and the width of the column it is in: wider, it scrolls sideways.
      drawnPx: svg ? svg.getBoundingClientRect().width : null,
      naturalPx: svg ? svg.viewBox.baseVal.width : null,
      columnPx: figure ? contentWidth(figure.parentElement) : null,
      name: svg ? svg.getAttribute("aria-label") || (svg.getAttribute("aria-labelledby") || "").split(" ").map((id) => svg.getRootNode().getElementById(id)?.textContent || "").join(" ").trim() : "",
      lowContrast: [],
      labels: [],
    };
    if (svg) {
      const box = svg.viewBox.baseVal;
      const scale = svg.getBoundingClientRect().width / box.width;
      const texts = [...svg.querySelectorAll("text, foreignObject span, foreignObject p")].filter(
        (el) => el.textContent.trim() && !el.querySelector("span, p, tspan"),
      );
      for (const el of texts) {
        const style = getComputedStyle(el);
        const size = parseFloat(style.fontSize) * scale;
        entry.minTextPx = entry.minTextPx === null ? size : Math.min(entry.minTextPx, size);
        if (el.classList.contains("sequenceNumber")) entry.sequenceNumberPx = Math.min(entry.sequenceNumberPx ?? size, size);
        if (!withContrast) continue;
        el.scrollIntoView({ block: "center", inline: "center" });
        const r = el.getBoundingClientRect();
        if (!r.width || !r.height) continue;
        const fg = parse(el instanceof SVGElement ? style.fill : style.color);
        if (!fg) continue;
        // Sequence numbers sit on a marker circle, which hit-testing does not see.
        const marker = el.classList.contains("sequenceNumber") && svg.querySelector("[id$='sequencenumber'] circle, [id$='sequencenumber']");
        const bg = marker
          ? blend(parse(getComputedStyle(marker).fill) || pageBackground, pageBackground)
          : backgroundAt(r.left + r.width / 2, r.top + r.height / 2, el);
        const contrast = ratio(blend(fg, bg), bg);
        const label = (el instanceof SVGElement ? el.textContent : el.innerText).trim();
        entry.labels.push(label);
        if (contrast < 4.5) entry.lowContrast.push(`${label} (${contrast.toFixed(2)}:1)`);
      }
    }
    if (figure) {
      // Cut at the column's edge: it must say so, beside an Expand control a finger can press.
      const button = figure.querySelector(".mcpref-diagram__bar button");
      const hint = figure.querySelector(".mcpref-diagram__hint");
      const b = button.getBoundingClientRect();
      entry.cut = entry.drawnPx > figure.querySelector(".mcpref-diagram__canvas").clientWidth + 1;
      entry.hint = hint && hint.getClientRects().length ? hint.textContent : null;
      entry.expandPx = entry.expand ? [b.width, b.height] : null;
      entry.controlsContrast = [hint, button].filter((el) => el.getClientRects().length).map(textContrast);
      entry.expanded = withExpand && entry.expand ? await expanded(button) : null;
    }
    diagrams.push(entry);
  }

  // Inline code in tables that the browser broke across lines inside a word.
  const brokenTableCode = [...document.querySelectorAll(".md-typeset td code, .md-typeset th code")]
    .filter((el) => !/\s/.test(el.textContent) && el.getClientRects().length > 1)
    .map((el) => el.textContent);

  // Code blocks: text hidden sideways without a visible scrollbar, and copy buttons over text.
  const hiddenCode = [];
  const cutCode = [];
  const coveredByCopy = [];
  for (const code of document.querySelectorAll(".md-typeset pre > code")) {
    const hidden = code.scrollWidth > code.clientWidth + 1;
    const language = [...(code.closest("[class*='language-']")?.classList || [])].find((c) => c.startsWith("language-"));
    if (hidden) cutCode.push(`${language || "no language"}: ${code.textContent.slice(0, 50)}`);
    const thumb = parse((getComputedStyle(code).scrollbarColor || "").split(/\)\s/)[0] + ")");
    if (hidden && (!thumb || thumb[3] < 0.3)) hiddenCode.push(code.textContent.slice(0, 60));
    if (hidden && /^data: /m.test(code.textContent)) hiddenCode.push(`SSE: ${code.textContent.slice(0, 60)}`);
    const button = code.parentElement.querySelector(".md-code__nav");
    if (!button) continue;
    const b = button.getBoundingClientRect();
    const box = code.getBoundingClientRect(); // text scrolled out of the box is hidden, not covered
    const range = document.createRange();
    range.selectNodeContents(code);
    for (const t of range.getClientRects()) {
      const r = {
        left: Math.max(t.left, box.left), right: Math.min(t.right, box.right),
        top: Math.max(t.top, box.top), bottom: Math.min(t.bottom, box.bottom),
      };
      if (r.right - r.left < 1 || r.bottom - r.top < 1) continue;
      if (r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top) {
        coveredByCopy.push(code.textContent.slice(0, 60));
        break;
      }
    }
  }

  // The console's request editor: hidden until "Edit request" is pressed (it was always shown,
  // under the frame that already shows the same request).
  const shownEditors = [...document.querySelectorAll(".mcpref-tryit__editor")].filter((el) => el.getClientRects().length > 0).length;

  // A TL;DR in smaller type than the body text around it.
  const bodySize = parseFloat(getComputedStyle(document.querySelector(".md-content__inner > p") || document.body).fontSize);
  const smallTldr = [...document.querySelectorAll(".md-typeset .admonition")]
    .filter((el) => el.querySelector(".admonition-title")?.textContent.trim() === "TL;DR")
    .map((el) => parseFloat(getComputedStyle(el.querySelector("p:not(.admonition-title)") || el).fontSize))
    .filter((size) => size < bodySize - 0.1);

  // SSE `data:` lines: each highlighted, and no JSON token that would fit on one line broken across two.
  // A stream the site shows one event per block (tests/docs/frames_hook.py): its wire lines hidden
  // (kept for Copy and the console), one highlighted event shown for each `data:` line.
  const plainData = [];
  const brokenTokens = [];
  const brokenIn = (box, spans) => {
    for (const span of spans) {
      const rects = [...span.getClientRects()].filter((r) => r.width > 0);
      const width = rects.reduce((sum, r) => sum + r.width, 0);
      // A string with spaces may wrap at one, as prose does; a token without any may not.
      if (rects.length > 1 && width < box.clientWidth * 0.8 && !/\s/.test(span.textContent)) brokenTokens.push(span.textContent);
    }
  };
  for (const code of document.querySelectorAll(".md-typeset pre > code")) {
    const lines = code.textContent.split("\n").filter((line) => /^data: [[{]/.test(line)).length;
    const wire = code.querySelector(":scope > .mcpref-sse__wire");
    if (wire) {
      if (!code.closest(".highlight").getClientRects().length) continue; // in a tab not chosen
      const events = [...(code.closest(".highlight")?.querySelectorAll(":scope > .mcpref-sse .mcpref-sse__data") || [])];
      const highlighted = events.filter((data) => data.getClientRects().length && data.querySelector(".nt")).length;
      if (wire.getClientRects().length) plainData.push(`wire lines shown: ${code.textContent.slice(0, 60)}`);
      if (lines !== highlighted) plainData.push(`${highlighted} events of ${lines}: ${code.textContent.slice(0, 60)}`);
      for (const data of events) brokenIn(data, data.querySelectorAll(".nt, .s2"));
      continue;
    }
    const highlighted = code.querySelectorAll(".mcpref-sse-data").length;
    if (lines !== highlighted) plainData.push(`${highlighted} of ${lines}: ${code.textContent.slice(0, 60)}`);
    brokenIn(code, code.querySelectorAll(".mcpref-sse-data > span"));
  }

  // The page title: as many lines as its text takes, with no line of its own for the ¶ anchor.
  const title = document.querySelector(".md-content__inner h1");
  let titleLines = null;
  if (title) {
    const style = getComputedStyle(title);
    const lineHeight = parseFloat(style.lineHeight);
    const middles = [];
    const walker = document.createTreeWalker(title, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest(".headerlink") || !node.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const r of range.getClientRects()) if (r.width > 0) middles.push(r.top + r.height / 2);
    }
    // Text on one line (inline code sits a little higher or lower than the words beside it).
    const lines = middles.sort((a, b) => a - b).filter((m, i, all) => i === 0 || m - all[i - 1] > lineHeight / 2);
    const inner = title.getBoundingClientRect().height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    titleLines = { text: lines.length, box: Math.round(inner / lineHeight) };
  }

  // Tables wider than the window, or hiding columns in the box Material scrolls them in.
  const wideTables = [...document.querySelectorAll(".md-content table")]
    .filter((t) => {
      const wrap = t.closest(".md-typeset__scrollwrap");
      return t.getBoundingClientRect().right > innerWidth + 1 || (wrap && wrap.scrollWidth > wrap.clientWidth + 1);
    })
    .map((t) => t.innerText.slice(0, 40));

  // Tab strips (Material's content tabs) with two tabs of the same label: consecutive `===` blocks
  // merge into one strip, so two comparisons back to back read "2025-11-25 · 2026-07-28" twice.
  const repeatedTabs = [...document.querySelectorAll(".md-typeset .tabbed-set")]
    .map((set) => [...set.querySelectorAll(":scope > .tabbed-labels > label")].map((l) => l.textContent.trim()))
    .filter((labels) => new Set(labels).size !== labels.length)
    .map((labels) => labels.join(" · "));
  const tabStrips = document.querySelectorAll(".md-typeset .tabbed-set").length;

  const errorGraphics = document.querySelectorAll("[id^='dmcpref-diagram'], svg[aria-roledescription='error']").length;
  window.scrollTo(0, 0);
  return {
    diagrams,
    brokenTableCode,
    wideTables,
    hiddenCode,
    cutCode,
    coveredByCopy,
    errorGraphics,
    shownEditors,
    smallTldr,
    plainData,
    brokenTokens,
    repeatedTabs,
    tabStrips,
    sidewaysScroll: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    height: document.documentElement.scrollHeight,
    titleLines,
    syntaxErrorText: document.body.innerText.includes("Syntax error in text"),
    markdownLink: document.querySelector("a[rel=alternate][type='text/markdown']")?.getAttribute("href") || null,
  };
}
