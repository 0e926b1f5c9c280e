"""Run a page's python blocks as a reader pasting them in order into one file would, and report
what each printed. Copied into the reader's folder and run by the venv the package was installed
in, so it imports nothing but the standard library (and, through the blocks, mcpref).

Reads a JSON list of block sources on stdin; writes a JSON list of {"printed", "error"} to the file
named by its argument, one per block run, stopping after the first block that raises.
"""

import contextlib
import io
import json
import sys
import traceback


def run(sources: list[str]) -> list[dict[str, str | None]]:
    namespace: dict[str, object] = {"__name__": "__main__"}
    results: list[dict[str, str | None]] = []
    for source in sources:
        printed = io.StringIO()
        error = None
        with contextlib.redirect_stdout(printed):
            try:
                exec(compile(source, "<block>", "exec"), namespace)
            except BaseException:  # noqa: BLE001 - whatever a block raises is its report
                error = traceback.format_exc()
        results.append({"printed": printed.getvalue(), "error": error})
        if error is not None:
            break
    return results


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(run(json.load(sys.stdin)), out)
