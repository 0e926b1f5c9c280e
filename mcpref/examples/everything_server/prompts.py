"""The everything server's prompts.

A prompt's arguments are its function's parameters (those without a default are required);
returning a `str` gives one user message, returning a list gives the messages as they are.
"""

from __future__ import annotations

from typing import Any

from mcpref import Server

from .media import RED_PIXEL_PNG

#: Suggestions offered by `completion/complete` for `test_prompt_with_arguments`' `arg1`.
ARG1_SUGGESTIONS = ("alpha", "beta", "gamma", "test-value", "testValue1")


def user(content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": content}


def register_prompts(server: Server) -> None:
    @server.prompt(title="Simple Prompt")
    def test_simple_prompt() -> str:
        """A prompt without arguments."""
        return "This is a simple prompt for testing."

    @server.prompt(
        title="Prompt With Arguments",
        arguments={"arg1": "First test argument", "arg2": "Second test argument"},
        complete={"arg1": lambda value: [s for s in ARG1_SUGGESTIONS if s.startswith(value)]},
    )
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two required arguments; arg1 has completions."""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(title="Prompt With Embedded Resource", arguments={"resourceUri": "URI of the resource to embed"})
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict[str, Any]]:  # the argument's wire name
        """A prompt that embeds a resource in its first message."""
        resource = {"uri": resourceUri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}
        return [
            user({"type": "resource", "resource": resource}),
            user({"type": "text", "text": "Please process the embedded resource above."}),
        ]

    @server.prompt(title="Prompt With Image")
    def test_prompt_with_image() -> list[dict[str, Any]]:
        """A prompt whose first message is an image."""
        return [
            user({"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"}),
            user({"type": "text", "text": "Please analyze the image above."}),
        ]
