"""The site's own pinned mermaid, provided by the build itself: a hook, and `python overrides/vendor_mermaid.py`.

The pages' diagrams are drawn by mermaid's ESM build, served from the site (never a CDN): its entry
module and the chunks it loads on demand, one per diagram type a page uses, in
`docs/assets/vendor/mermaid/` (git-ignored). mkdocs-mermaid2-plugin's `javascript` option points at
the entry module. The npm registry's tarball of the pinned version is fetched once into `.tools/`
(with Python; no Node needed), checked against the pinned sha256, and unpacked; a second build costs
one stamp read. Without it a build used to pass with every diagram an empty figure: now a build
that cannot get it fails and says how to fix that.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

VERSION = "12.3.0"
#: sha256 of https://registry.npmjs.org/mermaid/-/mermaid-12.3.0.tgz
TARBALL_SHA256 = "be0684e8d20bfc874df12c0f04927a5c482f57f2200eec54cca52a4583fd4040"
URL = f"https://registry.npmjs.org/mermaid/-/mermaid-{VERSION}.tgz"

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / ".tools" / "mermaid"
TARGET = ROOT / "docs" / "assets" / "vendor" / "mermaid"
#: What the site serves: the ESM entry, its chunks (no source maps), the licence.
ENTRY = "package/dist/mermaid.esm.min.mjs"
CHUNKS = "package/dist/chunks/mermaid.esm.min/"
STAMP = TARGET / ".pin"
#: The UMD bundle an older build put beside it (5.5 MB every page loaded): removed.
STALE = ROOT / "docs" / "assets" / "vendor" / "mermaid.min.js"


def _wanted(name: str) -> bool:
    return name == ENTRY or name == "package/LICENSE" or (name.startswith(CHUNKS) and name.endswith(".mjs"))


def tarball() -> bytes:
    """The pinned tarball: the copy in .tools/, else from the npm registry; checked either way."""
    cached = TOOLS / f"mermaid-{VERSION}.tgz"
    data = cached.read_bytes() if cached.is_file() else None
    if data is None or hashlib.sha256(data).hexdigest() != TARBALL_SHA256:
        try:
            with urllib.request.urlopen(URL, timeout=120) as answer:
                data = answer.read()
        except OSError as exc:
            raise PluginError(
                f"mermaid {VERSION} is not in {TARGET} and could not be fetched from {URL} ({exc}). The "
                f"diagrams need it: run `python overrides/vendor_mermaid.py` where the npm registry is "
                f"reachable, or put that tarball at {cached}."
            ) from exc
        digest = hashlib.sha256(data).hexdigest()
        if digest != TARBALL_SHA256:
            raise PluginError(f"{URL} has sha256 {digest}, not the pinned {TARBALL_SHA256}: not used")
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(data)
    return data


def ensure() -> bool:
    """Unpack the pinned mermaid into the site's assets unless it is there; True if it was unpacked."""
    STALE.unlink(missing_ok=True)
    pinned = STAMP.is_file() and STAMP.read_text(encoding="utf-8") == TARBALL_SHA256
    if pinned and (TARGET / Path(ENTRY).name).is_file():
        return False
    print(f"unpacking mermaid {VERSION} into {TARGET} (first build, or the pin changed)", file=sys.stderr)
    shutil.rmtree(TARGET, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(tarball()), mode="r:gz") as archive:
        for member in archive.getmembers():
            if member.isfile() and _wanted(member.name):
                relative = member.name.removeprefix("package/dist/").removeprefix("package/")
                destination = TARGET / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                assert source is not None
                destination.write_bytes(source.read())
    STAMP.write_text(TARBALL_SHA256, encoding="utf-8")
    return True


@event_priority(100)  # before any plugin looks for the file
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    ensure()
    return config


if __name__ == "__main__":
    ensure()
