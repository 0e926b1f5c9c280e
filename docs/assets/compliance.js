// Reference → Compliance (tests/docs/matrix.py renders it): the status filter's choice is kept in
// the address (`?status=divergent`), so that a reload or a shared link shows what the reader chose,
// and the table of contents lists only the spec pages with an entry shown. The filter itself is
// CSS (compliance.css), so that it works without this script too, only without being remembered.
(() => {
  const filter = document.querySelector(".mcpref-filter");
  if (!filter) return;
  const PARAM = "status";
  const radios = [...filter.querySelectorAll("input[name='mcpref-status']")];
  const chosen = () => radios.find((radio) => radio.checked)?.value || "all";

  const hideEmptyContents = () => {
    const status = chosen();
    for (const section of document.querySelectorAll(".mcpref-spec-page")) {
      const heading = section.querySelector("h2[id]");
      if (!heading) continue;
      const empty = status !== "all" && !section.querySelector(`.mcpref-req[data-status="${status}"]`);
      for (const link of document.querySelectorAll(`.md-nav--secondary a[href="#${CSS.escape(heading.id)}"]`)) {
        link.closest("li").style.display = empty ? "none" : "";
      }
    }
  };

  // The address's choice, unless it names an entry of another status (the entry wins).
  const asked = radios.find((radio) => radio.value === new URL(location.href).searchParams.get(PARAM));
  const target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  const wanted = target?.closest(".mcpref-req")?.dataset.status;
  if (asked && (!wanted || asked.value === "all" || asked.value === wanted)) asked.checked = true;

  filter.addEventListener("change", () => {
    const address = new URL(location.href);
    if (chosen() === "all") address.searchParams.delete(PARAM);
    else address.searchParams.set(PARAM, chosen());
    history.replaceState(history.state, "", address);
    hideEmptyContents();
  });
  hideEmptyContents();
})();
