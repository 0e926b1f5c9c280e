"""`python -m bench` (what scripts/bench runs); see `bench.run`."""

from .run import main

main()
