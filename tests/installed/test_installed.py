"""The package as a reader gets it, outside the repository.

`python -m build` makes an sdist and a wheel (the wheel built from the sdist, as build does) and
`twine check` passes both. The wheel, installed with its `demo` extra into a fresh venv in an
empty folder (no `--system-site-packages`, nothing of the clone on the path; dependencies from
the index and pip's cache), then runs the two guides as a reader follows them there: every step
file of the server guide saved on its own and run with `python stepN.py --stdio`, every python
block of both pages in order in one process with what each prints compared with its Output block,
and the server guide's HTTP frames sent to that venv's own `mcpref demo`, which the client guide's
blocks talk to as well.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import httpx
import pytest
import yaml
from sybil import Document

import mcpref
from mcpref import StreamableHTTP
from mcpref.demo import ENDPOINTS, FACTORIES
from tests.conftest import demo_process, mcp_body, mcp_headers
from tests.docs import compare, pages, placeholders
from tests.docs.messages import Request, Response, parse
from tests.docs.shown_files import shown

ROOT = Path(__file__).resolve().parents[2]
#: The server guide, in two pages: steps 1 to 4, then steps 5 to 7 with serving and testing.
SERVER_GUIDE = [ROOT / "docs" / "guides" / "build-a-server.md", ROOT / "docs" / "guides" / "build-a-server-2.md"]
CLIENT_GUIDE = ROOT / "docs" / "guides" / "build-a-client.md"
STEPS = sorted((ROOT / "mcpref" / "examples" / "guide_server").glob("step*.py"))
#: What a clone holds that is not the project (environments, caches, build output).
NOT_THE_PROJECT = shutil.ignore_patterns(
    ".git", ".venv", ".tools", ".artifacts", "site", "build", "dist", "*.egg-info", "__pycache__",
    ".*_cache", ".hypothesis", "node_modules",
)  # fmt: skip
OUTSIDE = "what it printed, run from the installed wheel in an empty folder"
#: The reader's environment: nothing that points Python at the clone.
ENV = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "VIRTUAL_ENV", "PORT")}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build` on a copy of the clone: the sdist, and the wheel built from it."""
    clone = tmp_path_factory.mktemp("clone") / "mcpref"
    shutil.copytree(ROOT, clone, ignore=NOT_THE_PROJECT)
    out = clone.parent / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(clone)], capture_output=True, text=True, timeout=300
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def test_build_makes_an_sdist_and_a_wheel_that_twine_passes(dist: Path) -> None:
    version = mcpref.__version__
    wheel, sdist = dist / f"mcpref-{version}-py3-none-any.whl", dist / f"mcpref-{version}.tar.gz"
    assert sorted(dist.iterdir()) == [wheel, sdist]
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    names = zipfile.ZipFile(wheel).namelist()
    assert {"mcpref/examples/guide_server/step2_tools.py", "mcpref/schemas/2026-07-28.json", "mcpref/demo.py"} <= set(
        names
    )
    with tarfile.open(sdist) as archive:
        top = {PurePosixPath(name).parts[1] for name in archive.getnames() if "/" in name}
    assert top == {"CHANGELOG.md", "LICENSE", "MANIFEST.in", "PKG-INFO", "README.md", "mcpref", "mcpref.egg-info",
                   "pyproject.toml", "setup.cfg"}, top  # fmt: skip
    entry_points = zipfile.ZipFile(wheel).read(f"mcpref-{version}.dist-info/entry_points.txt").decode()
    assert "mcpref = mcpref.cli:main" in entry_points


@pytest.fixture(scope="module")
def reader(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder outside the repository with a fresh venv, `mcpref[demo]` installed from the wheel."""
    folder = tmp_path_factory.mktemp("reader")
    assert not folder.resolve().is_relative_to(ROOT)
    venv.create(folder / ".venv", with_pip=False)
    python = folder / ".venv" / "bin" / "python"
    wheel = next(dist.glob("*.whl"))
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", f"{wheel}[demo]"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    where = subprocess.run(
        [python, "-c", "import mcpref; print(mcpref.__file__)"], capture_output=True, text=True, cwd=folder, env=ENV
    )
    assert where.stdout.startswith(str(folder / ".venv")), where.stdout + where.stderr
    return folder


@pytest.fixture(scope="module")
def demo(reader: Path) -> Iterator[str]:
    """`mcpref demo --port N`, the venv's console script, started in the reader's folder."""
    with demo_process(reader / ".venv" / "bin" / "mcpref", reader, ENV) as base:
        yield base


def test_the_wheels_mcpref_demo_serves_every_endpoint_the_pages_call(demo: str) -> None:
    """What the docs harness builds for the pages' frames (`mcpref.demo.FACTORIES`), the wheel's
    `mcpref demo` answers: each MCP endpoint with a result, the authorization demo's paths with
    what they are (metadata, a 401 challenge), none of them a 404."""
    for path in FACTORIES:
        if path in ENDPOINTS:
            response = httpx.post(demo + path, json=mcp_body("server/discover"), headers=mcp_headers("server/discover"))
            assert response.status_code == 200 and "result" in response.json(), (path, response.text)
        else:
            assert httpx.get(demo + path).status_code != 404, path
    challenge = httpx.post(demo + "/secure/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list"))
    assert challenge.status_code == 401


# -- the server guide's step files, each saved alone -------------------------------------------


def test_each_step_file_runs_on_its_own_from_an_empty_folder(reader: Path) -> None:
    """The file a page shows, saved under its own name in a folder that holds nothing else, and run
    with `python stepN.py --stdio`, answers `tools/list` with that step's tools."""
    files = {Path(match["path"]).name: match["body"] for page in SERVER_GUIDE for match in _shown(page)}
    assert sorted(files) == sorted([*(step.name for step in STEPS), "trails.py"])
    runs = {}
    for step in STEPS:
        alone = reader / step.stem
        alone.mkdir(exist_ok=True)
        (alone / step.name).write_text(files[step.name])
        runs[step.stem] = subprocess.Popen(
            [str(reader / ".venv" / "bin" / "python"), step.name, "--stdio"],
            cwd=alone,
            env=ENV,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    line = json.dumps(mcp_body("tools/list")) + "\n"
    for name, proc in runs.items():
        out, err = proc.communicate(line, timeout=30)
        assert proc.returncode == 0, f"python {name}.py --stdio: {err}"
        answer = json.loads(out.splitlines()[0])
        assert [tool["name"] for tool in answer["result"]["tools"]] == _tool_names(name), err


def _shown(page: Path) -> list[dict[str, str]]:
    return [match.groupdict() for match in shown(page.read_text("utf-8")) if "/guide_server/" in match["path"]]


def _tool_names(step: str) -> list[str]:
    """The tools the step offers (its first page of them), asked in-process of the clone's own copy."""
    module = importlib.import_module(f"mcpref.examples.guide_server.{step}")

    async def ask() -> list[str]:
        transport = httpx.ASGITransport(app=StreamableHTTP(module.build()))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            response = await http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list"))
            return [tool["name"] for tool in response.json()["result"]["tools"]]

    return asyncio.run(ask())


# -- every block of both guides ------------------------------------------------------------------


@pytest.mark.parametrize("page", [*SERVER_GUIDE, CLIENT_GUIDE], ids=lambda page: page.name)
def test_every_block_of_the_guide_runs_as_the_page_shows(page: Path, reader: Path, demo: str) -> None:
    python_blocks, frames = _runnable(page)
    assert python_blocks
    differences = [problem for request, response, where in frames for problem in _sent(demo, request, response, where)]
    sources = [block.source.replace(pages.PAGE_ORIGIN, demo) for block, _ in python_blocks]
    (reader / "blocks.py").write_text((Path(__file__).parent / "blocks.py").read_text())
    results_file = reader / f"{page.stem}.json"
    run = subprocess.run(
        [str(reader / ".venv" / "bin" / "python"), "blocks.py", str(results_file)],
        input=json.dumps(sources),
        capture_output=True,
        text=True,
        cwd=reader,
        env=ENV,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    results = json.loads(results_file.read_text())
    for (block, output), result in zip(python_blocks, results, strict=False):
        if result["error"]:
            differences.append(f"{block.where}: raised\n{result['error']}")
            continue
        expected = output.source.rstrip("\n") if output else ""
        printed = result["printed"].rstrip("\n")
        if printed != expected:
            differences.append(compare.report(block.where, [OUTSIDE], expected, printed))
    assert len(results) == len(python_blocks) or differences
    assert not differences, "\n\n".join(differences)


def _runnable(page: Path) -> tuple[list[tuple[pages.Block, pages.Block | None]], list[tuple[Request, Response, str]]]:
    """The page's python blocks (each with its Output block) and HTTP frames, in order; fails on
    any other block a reader could run, so nothing on the page goes unrun here."""
    found = pages.blocks(Document(page.read_text("utf-8"), str(page)))
    python_blocks, frames = [], []
    index = 0
    while index < len(found):
        block = found[index]
        following = found[index + 1] if index + 1 < len(found) else None
        if (block.title or "").startswith("Illustration") or block.language == "mermaid":
            pass
        elif pages.SHOWN_FILE.fullmatch(block.title or ""):
            pass  # a file of the package shown whole: the step files run on their own in the test above
        elif block.language == "python":
            output = following if following and following.language == "text" and following.title == "Output" else None
            python_blocks.append((block, output))
            index += output is not None
        elif block.language == "http" and following is not None:
            request, response = parse(block.source), parse(following.source)
            assert isinstance(request, Request) and isinstance(response, Response), block.where
            frames.append((request, response, following.where))
            index += 1
        else:
            pytest.fail(f"{block.where}: a ```{block.language} block the outside run does not know how to run")
        index += 1
    return python_blocks, frames


def _sent(base: str, request: Request, page_response: Response, where: str) -> list[str]:
    """Send the page's request to the demo over real HTTP; what differs from the page's response."""
    if request.headers and any(placeholders.contains_placeholder(value) for _, value in request.headers):
        return [f"{where}: a request with placeholders; the outside run sends only literal requests"]
    answer = httpx.request(
        request.method, base + request.target, headers=request.headers, content=request.body.encode(), timeout=30
    )
    differences = compare.response_differences(
        page_response, answer.status_code, list(answer.headers.multi_items()), answer.text
    )
    return [f"{where}: {difference}" for difference in differences]


# -- what the pages tell a reader to install -----------------------------------------------------

#: `pip install mcpref...` by name: what readers would type if the package were on PyPI.
BY_NAME = re.compile(r"""pip install\s+(?:-e\s+)?["']?mcpref\b""")


def test_every_pip_install_of_mcpref_shows_the_path_form() -> None:
    """mcpref is not on PyPI yet: a page that says `pip install "mcpref[postgres]"` sends readers to
    an error (or to someone else's package). Until it is published, each says `./mcpref[...]`."""
    texts = [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "deploy" / "run",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "mcpref").rglob("*.py"),
    ]
    by_name = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, found.start()) + 1}: {found.group()}"
        for path in texts
        for text in [path.read_text("utf-8")]
        for found in BY_NAME.finditer(text)
    ]
    assert not by_name, by_name
    assert 'pip install "./mcpref[demo]"' in (ROOT / "docs" / "guides" / "run-it.md").read_text("utf-8")


#: Pages for contributors, who have a clone by definition.
CLONE_PAGES = {ROOT / "docs" / "contributing.md"}
#: Where the clone is shown (once), and the pages that tell a newcomer to install from a clone.
CLONE_SHOWN = ("docs/guides/run-it.md", "## The pages' endpoints on your machine")
FROM_A_CLONE = sorted(
    str(path.relative_to(ROOT))
    for path in (ROOT / "docs").rglob("*.md")
    if path not in CLONE_PAGES and path.relative_to(ROOT).as_posix() != CLONE_SHOWN[0]
)


def test_the_git_clone_is_shown_once_and_the_other_install_lines_link_to_it() -> None:
    """Was: home, Run it and both guides said "install it from a clone, by path" and showed
    `pip install "./mcpref[demo]"`, and no page showed how to get the clone (an outside reader)."""
    repo = yaml.load((ROOT / "mkdocs.yml").read_text("utf-8"), Loader=yaml.BaseLoader)["repo_url"]
    clone = f"$ git clone {repo}\n"
    docs = [path for path in (ROOT / "docs").rglob("*.md") if path not in CLONE_PAGES]
    shown = [str(path.relative_to(ROOT)) for path in docs if re.search(r"\$ git clone\b", path.read_text("utf-8"))]
    assert shown == [CLONE_SHOWN[0]]
    section = (ROOT / CLONE_SHOWN[0]).read_text("utf-8").split(CLONE_SHOWN[1], 1)[1].split("\n## ", 1)[0]
    assert section.count(clone) == 1 and section.index(clone) < section.index('$ pip install "./mcpref[demo]"')
    link = "run-it.md#the-pages-endpoints-on-your-machine"
    for name in FROM_A_CLONE:  # every page: was home and the two guides, then four more were found
        unlinked = [
            " ".join(chunk.split())[:120]
            for chunk in chunks((ROOT / name).read_text("utf-8"))
            if '"./mcpref' in chunk and "```" not in chunk and link not in chunk
        ]
        assert unlinked == [], name


def chunks(text: str) -> Iterator[str]:
    """A page's paragraphs, list runs and fenced blocks (a fence stays whole, blank lines and all)."""
    chunk: list[str] = []
    fence = None
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence):
            fence = None
        if fence is None and not stripped:
            if chunk:
                yield "\n".join(chunk)
            chunk = []
        else:
            chunk.append(line)
    if chunk:
        yield "\n".join(chunk)


def test_no_page_names_scripts_serve_as_the_only_way() -> None:
    """A reader online has no clone: 14 pages said "With `./scripts/serve` running" and no word of
    `mcpref demo`. Wherever a page names ./scripts/serve, the same paragraph (or block) names
    `mcpref demo` first, most often as "`mcpref demo` (in a clone, `./scripts/serve`)"."""
    texts = [
        path
        for path in [*(ROOT / "docs").rglob("*.md"), *(ROOT / "docs" / "reference").glob("*.yaml")]
        if path not in CLONE_PAGES
    ]
    only_the_clone = [
        f"{path.relative_to(ROOT)}: {' '.join(chunk.split())[:160]}"
        for path in texts
        for chunk in chunks(path.read_text("utf-8"))
        if "./scripts/serve" in chunk and not -1 < chunk.find("mcpref demo") < chunk.find("./scripts/serve")
    ]
    assert not only_the_clone, "\n".join(only_the_clone)
    phrased = sum(path.read_text("utf-8").count("`mcpref demo` (in a clone, `./scripts/serve`)") for path in texts)
    assert phrased >= 14, phrased
