"""A multi-server host on `mcpref.client`: one catalogue over many servers, each kept apart.

```python
from mcpref.examples.host import ConsentGate, Host, Registry

registry = Registry()
registry.add(
    "weather", "http://127.0.0.1:8000/mcp", trust_annotations=True
)
registry.add("tides", "http://127.0.0.1:8000/tides/mcp")
gate = ConsentGate()
async with Host(registry, principal="alice", consent=gate) as host:
    await host.start()
    print(sorted(host.catalogue))
```

Modules, one job each: `registry` (servers, labels, trust, who may use them), `consent` (the
gate), `frames` (what each server was sent), `host` (clients, catalogue, routing, failures),
`apps` (MCP Apps: which tools the model sees, views checked, what a view may call).
`python -m mcpref.examples.host` is a small command-line driver. Patterns → Multi-server composition
(docs/patterns/composition.md) runs it against three servers.
"""

from .apps import AppView
from .consent import CALL, INPUT, ConsentGate, ConsentQuestion, ConsentRefused
from .frames import Frame, FrameLog
from .host import (
    AppCallRefused,
    CallRejected,
    CatalogueEntry,
    Connection,
    Host,
    HostError,
    InputQuestion,
    LabelledResult,
    ServerFailed,
    ServerUnavailable,
    ToolFailed,
    UnknownTool,
)
from .registry import Registry, ServerEntry

__all__ = [
    "CALL",
    "INPUT",
    "AppCallRefused",
    "AppView",
    "CallRejected",
    "CatalogueEntry",
    "Connection",
    "ConsentGate",
    "ConsentQuestion",
    "ConsentRefused",
    "Frame",
    "FrameLog",
    "Host",
    "HostError",
    "InputQuestion",
    "LabelledResult",
    "Registry",
    "ServerEntry",
    "ServerFailed",
    "ServerUnavailable",
    "ToolFailed",
    "UnknownTool",
]
