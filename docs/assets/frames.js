/* Folded frames (tests/docs/frames_hook.py wraps the lines, frames.css hides them): a fold's button
 * opens its lines in place, and closes them again. */
(function () {
  "use strict";
  document.addEventListener("click", (event) => {
    const toggle = event.target.closest && event.target.closest(".mcpref-fold__toggle");
    if (!toggle) return;
    const fold = toggle.parentElement;
    const open = fold.classList.toggle("mcpref-fold--open");
    toggle.setAttribute("aria-expanded", String(open));
    const label = toggle.dataset.label;
    toggle.setAttribute("aria-label", open ? `${label.replace(/^… /, "")} (hide)` : `${label} (show)`);
  });
})();
