"""`python -m mcpref.examples.host`: the host from the command line, with no model and no chat.

```console
$ python -m mcpref.examples.host --server weather=http://127.0.0.1:8000/mcp --trust weather \\
      --server tides=http://127.0.0.1:8000/tides/mcp list
$ python -m mcpref.examples.host --server tides=http://127.0.0.1:8000/tides/mcp \\
      call tides.get_forecast '{"port": "oslo"}'
```

Consent questions and the servers' questions are asked on the terminal, each labelled with its
server; `--allow weather.file_report` (and `--allow-input`) answers one in advance. Without a
terminal every undecided question is a refusal. `--oauth secure` gives that server its own
OAuth (the browser opens for sign-in; `--client-id ISSUER=ID` for a pre-registered client).
`--frames` prints what each server was sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from mcpref.client import ClientRegistration, LoopbackRedirect, OAuth

from . import ConsentGate, ConsentQuestion, Host, HostError, InputQuestion, Registry
from .consent import CALL, ConsentRefused


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return asyncio.run(_run(args))
    except (ValueError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mcpref.examples.host", description=__doc__.split("\n")[0])
    parser.add_argument("--server", action="append", default=[], metavar="LABEL=URL", required=True)
    parser.add_argument("--trust", action="append", default=[], metavar="LABEL", help="trust its tool annotations")
    parser.add_argument("--oauth", action="append", default=[], metavar="LABEL", help="sign in to it with OAuth")
    parser.add_argument("--client-id", action="append", default=[], metavar="ISSUER=ID")
    parser.add_argument("--allow", action="append", default=[], metavar="LABEL.TOOL", help="allow calling it")
    parser.add_argument("--allow-input", action="append", default=[], metavar="LABEL.TOOL", help="allow answering it")
    parser.add_argument("--principal", default="local-user")
    parser.add_argument("--frames", action="store_true", help="print what each server was sent")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the merged catalogue and each server's health")
    call = commands.add_parser("call", help="call one catalogue tool")
    call.add_argument("name", metavar="LABEL.TOOL")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as a JSON object")
    return parser


async def _run(args: argparse.Namespace) -> int:
    registry = Registry()
    registrations = dict(_pair(item) for item in args.client_id)
    for item in args.server:
        label, url = _pair(item)
        auth = _oauth(registrations) if label in args.oauth else None
        registry.add(label, url, auth=auth, trust_annotations=label in args.trust)
    interactive = sys.stdin.isatty()
    gate = ConsentGate(ask=_ask_consent if interactive else None)
    for stage, names in (("call", args.allow), ("input", args.allow_input)):
        for name in names:
            label, _, tool = name.partition(".")
            gate.allow(label, tool, stage=stage)
    async with Host(
        registry, principal=args.principal, consent=gate, ask_user=_ask_user if interactive else _decline, listen=False
    ) as host:
        await host.start()
        status = 0
        if args.command == "list":
            for name, entry in sorted(host.catalogue.items()):
                mark = "" if entry.available else "  (unavailable)"
                print(f"{name}{mark}: {entry.description.splitlines()[0] if entry.description else ''}")
            for label, health in host.status().items():
                print(f"# {label}: {health}")
        else:
            try:
                result = await host.call(args.name, json.loads(args.arguments))
                print(result.for_model())
            except (HostError, ConsentRefused) as error:
                print(f"{type(error).__name__}: {error}", file=sys.stderr)
                if isinstance(error, ConsentRefused) and not interactive:
                    asked = error.question
                    flag = "--allow" if asked.stage == CALL else "--allow-input"
                    print(f"no terminal to ask on: {flag} {asked.server}.{asked.tool}", file=sys.stderr)
                status = 1
        if args.frames:
            for label in host.servers:  # server by server: discovery runs on all of them at once
                for frame in host.frames.of(label):
                    print(frame.line())
        return status


def _pair(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key or not value:
        raise ValueError(f"expected NAME=VALUE, got {item!r}")
    return key, value


def _oauth(registrations: dict[str, str]) -> Any:
    def make() -> OAuth:
        clients = {issuer: ClientRegistration(client_id) for issuer, client_id in registrations.items()}
        return OAuth(redirect=LoopbackRedirect(), clients=clients)  # on a port the OS picks

    return make


def _ask_consent(question: ConsentQuestion) -> bool:
    detail = json.dumps(dict(question.detail))
    return input(f"{question} {detail} [y/N] ").strip().lower() == "y"


def _ask_user(question: InputQuestion) -> dict[str, Any]:
    """A form elicitation on the terminal: each field in turn, `decline` on an empty first answer."""
    print(question)
    schema = question.params.get("requestedSchema") or {}
    content: dict[str, Any] = {}
    for field, spec in (schema.get("properties") or {}).items():
        raw = input(f"  {spec.get('title', field)} ({spec.get('type', 'string')}): ").strip()
        if not raw and not content:
            return {"action": "decline"}
        content[field] = _typed(raw, spec.get("type"))
    return {"action": "accept", "content": content}


def _typed(raw: str, kind: Any) -> Any:
    if kind == "boolean":
        return raw.lower() in ("y", "yes", "true")
    if kind in ("integer", "number"):
        return json.loads(raw)
    return raw


def _decline(question: InputQuestion) -> dict[str, Any]:
    print(f"{question} (no terminal: declined)", file=sys.stderr)
    return {"action": "decline"}


if __name__ == "__main__":
    sys.exit(main())
