"""The site in a real browser: Debian's chromium, driven by Playwright, against the site exactly as
`./scripts/serve` serves it (`docsite.py` on a free loopback port).

One browser for the whole package. Every page is visited once per viewport and palette; what a
reader would see is measured in that one pass (`survey`), and the tests assert on the measurements.
Screenshots go to `.artifacts/browser/` (git-ignored), one per page and palette at desktop width
(the whole page with MCPREF_FULL_SCREENSHOTS=1).

No Chromium: the tests skip and say how to install it, except under CI=true, where that is a failure.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from docsite import make_app
from tests.conftest import RUN_FOLDER, Once, running

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("MCPREF_ARTIFACTS", ROOT / ".artifacts")) / "browser"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Whole-page screenshots cost up to half a minute on the longest pages; the first screen of each
# page is written by default, and every pixel with MCPREF_FULL_SCREENSHOTS=1.
FULL_PAGE_SHOTS = os.environ.get("MCPREF_FULL_SCREENSHOTS") == "1"
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "mobile": {"width": 390, "height": 844}}


def chromium_path() -> str | None:
    for candidate in (os.environ.get("MCPREF_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


@pytest.fixture(scope="package")
def chromium() -> str:
    path = chromium_path()
    if path is None:
        reason = "no Chromium: `apt-get install chromium` (Debian) for the browser tests; ./scripts/test as root does"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="package")
def site_url(built_site: Path) -> Iterator[str]:
    with running(make_app(built_site)) as url:
        yield url


#: Where a static host (GitHub Pages) serves the site: under the project's sub-path.
STATIC_PREFIX = "/mcpref"


@pytest.fixture(scope="package")
def static_site_url(built_site: Path) -> Iterator[str]:
    """The built site as a static host serves it: plain files under a sub-path, no MCP endpoint,
    404.html for anything missing. The URL of its root, without the final slash."""
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    app = Starlette(routes=[Mount(STATIC_PREFIX, StaticFiles(directory=built_site, html=True))])
    with running(app) as url:
        yield url + STATIC_PREFIX


@pytest.fixture(scope="package")
def pages(built_site: Path) -> list[str]:
    """Every page's path, as a reader types it: `/`, `/internals/overview/`, ..."""
    return site_pages(built_site)


def site_pages(built_site: Path) -> list[str]:
    found = []
    for html in sorted(built_site.rglob("index.html")):
        relative = html.parent.relative_to(built_site).as_posix()
        if relative.startswith(("assets", "search")):
            continue
        found.append("/" if relative == "." else f"/{relative}/")
    return found


@pytest.fixture(scope="package")
def browser(chromium: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # Playwright starts each launch with a fresh, temporary user-data-dir of its own.
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Visit:
    """What one page looked like at one viewport and palette."""

    console_errors: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    failed_responses: list[str] = field(default_factory=list)
    facts: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # by (viewport, palette)


OPEN_SHADOW_ROOTS = """
const attachShadow = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) { return attachShadow.call(this, { ...init, mode: "open" }); };
"""


def guard(site_url: str, record: list[str]) -> Any:
    """A route handler: any request that would leave 127.0.0.1 is refused, and recorded. The other
    loopback name, `localhost`, is the same server: the MCP Apps page loads its sandbox proxy from it."""
    hosts = {urlsplit(site_url).hostname, "localhost"}

    def handle(route: Any) -> None:
        url = route.request.url
        if urlsplit(url).hostname in hosts or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            record.append(url)
            route.abort()

    return handle


def open_context(browser: Any, site_url: str, viewport: str, palette: str, record: list[str] | None = None) -> Any:
    """A fresh browser context that refuses (and records) any request leaving 127.0.0.1."""
    context = browser.new_context(viewport=VIEWPORTS[viewport], color_scheme=palette)
    context.route("**/*", guard(site_url, record if record is not None else []))
    # Shadow roots open to the tests: a diagram drawn into a closed one (Material's own mermaid
    # integration does that) is then measured like any other instead of being invisible to them.
    context.add_init_script(OPEN_SHADOW_ROOTS)
    return context


@pytest.fixture(scope="module")
def page(browser: Any, site_url: str) -> Iterator[Any]:
    """One tab for a test module, at 1280 px in the light palette, with the clipboard granted
    (the copy buttons' tests read it back), opened at the home page."""
    context = open_context(browser, site_url, "desktop", "light")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_url)
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    goto(tab, site_url + "/")
    yield tab
    context.close()


DRAWN_WITHIN_MS = int(os.environ.get("MCPREF_DIAGRAM_TIMEOUT_MS", "30000"))


def wait_for_diagrams(page: Any, palette_scheme: str | None = None) -> str | None:
    """Wait until site.js has drawn every diagram (or shown, visibly, why not); a problem, or None."""
    check = "document.documentElement.dataset.diagrams === 'ready'"
    if palette_scheme:
        check += f" && document.documentElement.dataset.diagramsPalette === '{palette_scheme}'"
    try:
        page.wait_for_function(check, timeout=DRAWN_WITHIN_MS)
    except Exception:  # playwright's TimeoutError: report it as what the reader would see
        return f"diagrams not drawn within {DRAWN_WITHIN_MS} ms ({palette_scheme or 'first load'})"
    return None


def goto(page: Any, url: str) -> str | None:
    """Load a page and wait until its diagrams are drawn; a problem, or None."""
    page.goto(url, wait_until="load")
    return wait_for_diagrams(page)


MEASURE = (Path(__file__).parent / "measure.js").read_text(encoding="utf-8")


def switch_palette(page: Any, palette: str) -> str | None:
    """Use the palette toggle as a reader would, and wait for the diagrams drawn in its colours."""
    scheme = "slate" if palette == "dark" else "default"
    if page.evaluate("document.body.dataset.mdColorScheme") != scheme:
        page.locator("[data-md-component=palette] label:not([hidden])").click()
    page.wait_for_function("([s]) => document.body.dataset.mdColorScheme === s", arg=[scheme])
    return wait_for_diagrams(page, scheme)


#: Pages surveyed at once, each worker a thread with its own Playwright, browser and context. The
#: survey is CPU-bound in Chromium's renderer (one core per tab): two at once use both cores of a
#: small machine. Each page's facts do not depend on which worker took it, nor in what order.
SURVEY_WORKERS = int(os.environ.get("MCPREF_SURVEY_WORKERS", "2"))

#: The palette toggle's choice is kept in localStorage; forgotten before each page loads, every
#: page is met as a first-time reader meets it, in the light palette.
FORGET_PALETTE = """
try {
  for (const key of Object.keys(localStorage)) if (key.endsWith("__palette")) localStorage.removeItem(key);
} catch (error) {}  // about:blank has no localStorage
"""


def survey_page(page: Any, context: Any, site_url: str, path: str) -> Visit:
    """One page at every viewport and palette (see `survey`)."""
    visit = Visit()
    name = path.strip("/").replace("/", "_") or "home"
    page.set_viewport_size(VIEWPORTS["desktop"])
    context.unroute("**/*")
    context.route("**/*", guard(site_url, visit.outside_requests))
    listeners = {
        "console": lambda m: m.type == "error" and visit.console_errors.append(m.text),
        "pageerror": lambda e: visit.console_errors.append(f"uncaught: {e}"),
        "response": lambda r: r.status >= 400 and visit.failed_responses.append(f"{r.status} {r.url}"),
    }
    for event, listener in listeners.items():
        page.on(event, listener)
    problems = [goto(page, site_url + path)]
    for palette, viewports in (("light", ("desktop", "mobile")), ("dark", ("mobile", "desktop"))):
        problems.append(switch_palette(page, palette))
        for viewport in viewports:
            page.set_viewport_size(VIEWPORTS[viewport])
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            desktop = viewport == "desktop"
            # Expand is opened on a phone, where diagrams are cut; contrast is measured on a desktop.
            measuring = {"withContrast": desktop, "withExpand": not desktop}
            visit.facts[(viewport, palette)] = page.evaluate(MEASURE, measuring)
            if desktop:
                shot = ARTIFACTS / f"{name}-{palette}.jpeg"
                page.screenshot(path=str(shot), type="jpeg", quality=70, full_page=FULL_PAGE_SHOTS)
    visit.console_errors.extend(problem for problem in dict.fromkeys(problems) if problem)
    for event, listener in listeners.items():
        page.remove_listener(event, listener)
    return visit


def survey_worker(chromium: str, site_url: str, todo: queue.SimpleQueue[str], visits: dict[str, Visit]) -> None:
    """Survey pages from `todo` until it is empty, in a browser of this thread's own (Playwright's
    sync API serves the thread that started it only)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        context = open_context(browser, site_url, "desktop", "light")
        context.add_init_script(FORGET_PALETTE)
        page = context.new_page()
        while True:
            try:
                path = todo.get_nowait()
            except queue.Empty:
                break
            visits[path] = survey_page(page, context, site_url, path)
        browser.close()


def survey_all(chromium: str, site_url: str, pages: list[str]) -> dict[str, Visit]:
    """Every page at every viewport and palette, `SURVEY_WORKERS` pages at once: {path: Visit}."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    todo: queue.SimpleQueue[str] = queue.SimpleQueue()
    for path in pages:
        todo.put(path)
    visits: dict[str, Visit] = {}
    with ThreadPoolExecutor(SURVEY_WORKERS) as pool:
        for worker in [pool.submit(survey_worker, chromium, site_url, todo, visits) for _ in range(SURVEY_WORKERS)]:
            worker.result()  # a worker's exception fails the fixture, with its traceback
    assert sorted(visits) == sorted(pages), "every page surveyed"
    return {path: visits[path] for path in pages}


class EarlySurvey:
    """The survey, started as soon as the site is built rather than when the browser tests come
    (they run last): it takes about a minute of Chromium, and the tests that run meanwhile leave
    most of the machine idle (they wait on servers and sockets). On its own server of the same app;
    the visits do not depend on which server answered. One survey for the run: with pytest-xdist,
    the worker that claims it (`Once`) surveys, and leaves the visits for the others."""

    def __init__(self, build: Any, chromium: str, once: Once) -> None:
        self.result: dict[str, Visit] | None = None
        self.error: BaseException | None = None
        self.once = once
        self._thread: threading.Thread | None = None
        if once.claim():
            self._thread = threading.Thread(target=self._run, args=(build, chromium), name="early survey", daemon=True)
            self._thread.start()

    def _run(self, build: Any, chromium: str) -> None:
        try:
            returncode, _ = build.wait()
            if returncode != 0:
                return  # built_site reports the build's failure; the fixture surveys nothing then
            with running(make_app(build.site)) as url:
                self.result = survey_all(chromium, url, site_pages(build.site))
        except BaseException as exc:  # handed to the fixture, which raises it in the test
            self.error = exc
        finally:
            self.once.done(self.result)  # the other workers survey for themselves if this is None

    def join(self) -> dict[str, Visit] | None:
        if self._thread is None:
            result: dict[str, Visit] | None = self.once.wait()
            return result
        self._thread.join()
        if self.error is not None:
            raise self.error
        return self.result

    def finish(self) -> None:
        if self._thread is not None:
            self._thread.join()


EARLY_SURVEY = pytest.StashKey[EarlySurvey]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the survey early when a selected test reads it and the site is being built."""
    from tests.conftest import SITE_BUILD

    config = session.config
    chromium = chromium_path()
    wanted = any("survey" in getattr(item, "fixturenames", ()) for item in session.items)
    if wanted and chromium and SITE_BUILD in config.stash and not config.option.collectonly:
        once = Once(config.stash[RUN_FOLDER], "survey")
        config.stash[EARLY_SURVEY] = EarlySurvey(config.stash[SITE_BUILD], chromium, once)


def pytest_unconfigure(config: pytest.Config) -> None:
    """A pytest-xdist worker that surveys for the others finishes before it stops."""
    early = config.stash.get(EARLY_SURVEY, None)
    if early is not None and hasattr(config, "workerinput"):
        early.finish()


@pytest.fixture(scope="package")
def survey(request: pytest.FixtureRequest, chromium: str, site_url: str, pages: list[str]) -> dict[str, Visit]:
    """Every page at every viewport and palette, measured once: {path: Visit}.

    Each page is loaded once, in the light palette at desktop width; the window is then narrowed to
    a phone's, the palette toggled as a reader would, and the window widened again, measuring at
    each step. Diagram contrast (which follows the palette, not the width) is measured at desktop
    width, where the screenshot of each palette is taken too; the rest at every step.
    Started early by `EarlySurvey` when it can be; else here."""
    early = request.config.stash.get(EARLY_SURVEY, None)
    result = early.join() if early is not None else None
    if result is not None and list(result) == pages:
        return result
    return survey_all(chromium, site_url, pages)
