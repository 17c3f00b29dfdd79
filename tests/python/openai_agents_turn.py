"""One turn of an OpenAI Agents SDK conversation on AgentStateSession, with a scripted model.

Run as a script (``python openai_agents_turn.py DSN SESSION_ID TEXT``) it is a process that ends
after its turn, so a test can show the next turn, in another process, sees the whole history.
The model calls the ``lookup`` tool once per turn, then answers with how many input items it was
given, so the answer proves what history the session handed the SDK.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from psycopg_pool import AsyncConnectionPool

from agent_state.openai_agents import AgentStateSession

set_tracing_disabled(True)


@function_tool
def lookup(topic: str) -> str:
    """Looks a topic up."""
    return f"facts about {topic}"


class ScriptedModel(Model):
    """Asks for the tool when the last input item is the user's, answers otherwise."""

    def __init__(self) -> None:
        self.inputs: list[list[Any]] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        last = items[-1]
        if isinstance(last, dict) and last.get("role") == "user":
            call = ResponseFunctionToolCall(
                type="function_call", call_id=f"call-{len(items)}", name="lookup", arguments=json.dumps({"topic": "x"})
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(type="output_text", text=f"saw {len(items)} items", annotations=[])
        message = ResponseOutputMessage(
            id=f"msg-{len(items)}", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


async def turn(dsn: str, session_id: str, text: str) -> str:
    async with AsyncConnectionPool(dsn, kwargs={"autocommit": True}, min_size=1, max_size=2, open=False) as pool:
        agent = Agent(name="assistant", instructions="Be brief.", model=ScriptedModel(), tools=[lookup])
        result = await Runner.run(agent, text, session=AgentStateSession(session_id, pool))
        return str(result.final_output)


if __name__ == "__main__":
    print(asyncio.run(turn(sys.argv[1], sys.argv[2], sys.argv[3])))
