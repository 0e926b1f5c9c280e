"""Run a command once one of N slots is free: how the client side bounds its scenarios' clients.

`conformance client --requirements R` starts every scenario of the set at once: 39 mock servers,
and for each a client process (`mcpref/examples/conformance_client/run`, a Python start). On a
two-core machine that is also running the rest of the suite, that many interpreters starting
together starve the CLI's own mock servers, which then drop connections: a scenario's stderr
holds `ReadError('')` and the run fails for the machine, not for the client. So each client
first takes a slot, an exclusive `flock` on one of N files in a folder of the run. The lock is
held by the open file, which the command inherits over `exec`, so it is released when the client
exits, however it exits, and a slot cannot leak.

    python tests/conformance/slots.py FOLDER N command [arguments...]

Standard library only, and run as a file, not a module: it costs one bare interpreter start.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

#: How often a waiting client looks for a free slot again; a client run takes a second or more.
POLL = 0.05


def take_slot(folder: str, count: int) -> int:
    """An open file descriptor holding one of `count` slots, waiting until one is free."""
    while True:
        for index in range(count):
            fd = os.open(os.path.join(folder, f"slot-{index}"), os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return fd
        time.sleep(POLL)


def main(argv: list[str]) -> None:
    folder, count, *command = argv
    if not command:
        sys.exit("usage: slots.py FOLDER N command [arguments...]")
    fd = take_slot(folder, int(count))
    os.set_inheritable(fd, True)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
