"""Step 1: a server with one tool, served over Streamable HTTP or stdio."""

from mcpref import Server, StreamableHTTP
from mcpref.run import main


def build() -> Server:
    """The server and its first tool. Each later step calls the step before
    it, then adds."""
    server = Server(
        "trailhead",
        "0.1.0",
        title="Trailhead (the guide's server)",
        instructions=(
            "Hiking trails: look them up, plan a walk."
            " The trails are made up."
        ),
    )

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "Who is setting out",
                },
            },
            "required": ["name"],
        },
    )
    def greet(name: str) -> str:
        """Wish a hiker a good walk."""
        return f"Good walk, {name}!"

    return server


server = build()
app = StreamableHTTP(server)

if __name__ == "__main__":
    main(server, app)
