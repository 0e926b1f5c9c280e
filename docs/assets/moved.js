/* Sections that moved to a page of their own keep their old links working: a link to
 * `internals/transports/#x-mcp-header-the-rules-in-full`, whose anchor this page no longer has,
 * goes on to the page the section moved to (docs/assets/moved.json, written when a page is split). */
(function () {
  "use strict";
  const anchor = decodeURIComponent(location.hash.slice(1));
  if (!anchor || document.getElementById(anchor)) return;
  const script = document.currentScript;
  const root = new URL("..", script.src); // this script is at <site>/assets/moved.js
  const here = new URL(location.href);
  const page = here.pathname.slice(root.pathname.length).replace(/index\.html$/, "");
  fetch(new URL("assets/moved.json", root))
    .then((response) => (response.ok ? response.json() : {}))
    .then((moved) => {
      const target = (moved[page] || {})[anchor];
      if (target) location.replace(new URL(target, root).href + location.hash);
    })
    .catch(() => {});
})();
