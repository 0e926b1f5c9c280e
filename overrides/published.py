"""MkDocs hooks for the published site: where it lives, where its source is, what it was verified against.

- `repo_url` in mkdocs.yml is the one place that names the repository's owner: `site_url` is its
  GitHub Pages address (`https://<owner>.github.io/<repo>/`), unless mkdocs.yml sets one.
- Every page's footer line (overrides/partials/source-file.html) names the MCP revision, the
  mcpref version and the commit the site was built from, whose suite executed the page's frames,
  and links "Report a problem with this page": the repository's wrong-on-a-page issue form,
  prefilled with the page's path.
- CHANGELOG.md is a page of the site (`changelog/`), built from the file itself, never a copy.
"""

from __future__ import annotations

import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import ConfigurationError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from mcpref.meta import LATEST_VERSION

ROOT = Path(__file__).resolve().parents[1]
REPORT_TEMPLATE = ROOT / ".github" / "ISSUE_TEMPLATE" / "wrong-on-a-page.md"
CHANGELOG = ROOT / "CHANGELOG.md"
CHANGELOG_PAGE = "changelog.md"


def pages_url(repo_url: str) -> str:
    """`https://github.com/<owner>/<repo>` -> `https://<owner>.github.io/<repo>/`."""
    parts = urlsplit(repo_url)
    segments = [segment for segment in parts.path.split("/") if segment]
    if parts.netloc != "github.com" or len(segments) != 2:
        raise ConfigurationError(f"repo_url must be https://github.com/<owner>/<repo>, not {repo_url!r}")
    owner, repo = segments
    return f"https://{owner.lower()}.github.io/{repo}/"


def commit() -> tuple[str, bool]:
    """The commit the site is built from, and whether the work tree differs from it (`git`)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "", False
    return head, bool(status.strip())


def package_version() -> str:
    try:
        return version("mcpref")
    except PackageNotFoundError:
        return "unknown (mcpref is not installed)"


@event_priority(100)  # before the sitemap, the canonicals and the llmstxt plugin read site_url
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if not config.repo_url:
        raise ConfigurationError("repo_url is not set: the site's edit and report links need it")
    if not config.site_url:
        config.site_url = pages_url(config.repo_url)
    head, dirty = commit()
    config.extra["verified"] = {
        "revision": LATEST_VERSION,
        "mcpref": package_version(),
        "commit": head[:12] or "unknown (not built from a git clone)",
        "sha": head,  # in full: the API reference's source links are pinned to it
        "commit_url": f"{config.repo_url.rstrip('/')}/commit/{head}" if head else None,
        "dirty": dirty,
    }
    return config


@event_priority(110)  # before hooks.py lists every page for the llmstxt plugin
def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    text = CHANGELOG.read_text(encoding="utf-8")
    files.append(File.generated(config, CHANGELOG_PAGE, content=text))
    return files


def report_url(repo_url: str, source: str, page_url: str) -> str:
    """A new issue from the wrong-on-a-page template, its first field filled in with the page."""
    body = REPORT_TEMPLATE.read_text(encoding="utf-8").split("\n---\n", 1)[1].lstrip("\n")
    first, _, rest = body.partition("\n")
    query = urlencode(
        {
            "template": REPORT_TEMPLATE.name,
            "labels": "docs",
            "title": f"Wrong on {source}: ",
            "body": f"{first} {source} ({page_url})\n{rest}",
        }
    )
    return f"{repo_url.rstrip('/')}/issues/new?{query}"


def on_page_context(context: dict, *, page: Page, config: MkDocsConfig, nav: object) -> dict:
    repo = config.repo_url.rstrip("/")
    if page.file.src_uri == CHANGELOG_PAGE and page.file.generated_by:  # its source is at the root
        source = CHANGELOG.name
        page.edit_url = f"{repo}/edit/main/{source}"
    else:
        # The page's path in the repository, as its edit link names it (edit_uri: edit/main/docs/).
        folder = "/".join(config.edit_uri.strip("/").split("/")[2:])
        source = f"{folder}/{page.file.src_uri}" if folder else page.file.src_uri
    context["mcpref_report_url"] = report_url(repo, source, page.canonical_url or config.site_url or "")
    return context


def on_template_context(context: dict, *, template_name: str, config: MkDocsConfig) -> dict:
    """The 404 page is served for any missing path, at any depth and under any sub-path: its links
    are written relative (`./assets/...`) and overrides/404.html puts a `<base>` in front of them
    that names the site's root, found from the address at run time."""
    if template_name == "404.html":
        context["mcpref_site_path"] = urlsplit(config.site_url or "/").path
        context["base_url"] = "."
    return context
