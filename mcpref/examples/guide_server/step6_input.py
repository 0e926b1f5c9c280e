"""Step 6: a tool that needs the user's answer first: an input_required
result, then the retry."""

from mcpref import (
    InputRequired,
    RequestContext,
    Server,
    StreamableHTTP,
    ToolError,
    elicit_form,
)

# The step before, as mcpref installs it: runs from any folder. To build on
# your own copy of it instead, save it next to this file and write
# `import step5_progress`.
from mcpref.examples.guide_server import step5_progress
from mcpref.examples.guide_server.trails import TRAILS
from mcpref.run import main


def build() -> Server:
    server = step5_progress.build()

    @server.tool(
        title="Book a shelter night",
        description=(
            "Book a night in a trail's shelter, after the user says how"
            " many are coming."
        ),
        input_schema={
            "type": "object",
            "properties": {"trail": {"type": "string"}},
            "required": ["trail"],
        },
        annotations={
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": True,
        },
        # Without form elicitation the client could not answer: it gets
        # -32021 instead of a question.
        requires={"elicitation": {"form": {}}},
    )
    def book_shelter(
        trail: str, ctx: RequestContext
    ) -> str | InputRequired:
        if trail not in TRAILS:
            raise ToolError(f"No trail called {trail!r}.")
        shelter = f"the {TRAILS[trail]['name']} shelter"
        answer = ctx.input_response("party")
        if answer is None:
            # Round one: ask, and seal the trail into requestState so the
            # retry can be checked.
            form = elicit_form(
                f"How many people are staying at {shelter}?",
                {
                    "people": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 8,
                        "title": "People",
                    }
                },
                ["people"],
            )
            return InputRequired({"party": form}, state={"trail": trail})
        if ctx.state != {"trail": trail}:
            raise ToolError(
                "That answer was for another trail; start again."
            )
        if answer.get("action") != "accept":
            return "Nothing booked."
        people = answer["content"]["people"]
        return f"Booked {people} place(s) at {shelter}."

    return server


server = build()
app = StreamableHTTP(server)

if __name__ == "__main__":
    main(server, app)
