"""Step 4: a prompt with arguments, and completion for one of them."""

from mcpref import Server, StreamableHTTP

# The step before, as mcpref installs it: runs from any folder. To build on
# your own copy of it instead, save it next to this file and write
# `import step3_resources`.
from mcpref.examples.guide_server import step3_resources
from mcpref.examples.guide_server.trails import TRAILS
from mcpref.run import main

COMPANY = ("alone", "friends", "kids")


def build() -> Server:
    server = step3_resources.build()

    @server.prompt(
        title="Plan a walk",
        description=(
            "Ask the model for a walking plan; a str becomes one user"
            " message."
        ),
        arguments={
            "trail": "Trail id, e.g. lake-path",
            "company": "alone, friends or kids",
        },
        complete={
            "company": lambda value: [
                c for c in COMPANY if c.startswith(value)
            ]
        },
    )
    def plan_walk(trail: str, company: str = "alone") -> str:
        name = TRAILS[trail]["name"] if trail in TRAILS else trail
        return (
            f"Plan a day on {name}, company: {company}. Give a start time,"
            " breaks and what to pack."
        )

    return server


server = build()
app = StreamableHTTP(server)

if __name__ == "__main__":
    main(server, app)
