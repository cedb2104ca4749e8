"""Google ADK on the traffic scenario, through its `LiteLlm` model class (OpenAI provider).

Model: `LiteLlm(model="openai/<name>", api_base=<server>, api_key=...)` (ADK's way to reach an
OpenAI-compatible server; LiteLLM calls it with the `openai` client). Agents:
`LlmAgent(name, model, instruction=..., description=..., tools=[fn])`, triage with
`sub_agents=[billing, shipping]`: ADK offers each agent one `transfer_to_agent(agent_name)`
tool for its parent and sub-agents (and peers) and describes them in its system
instruction. `InMemoryRunner`, one session per conversation, `run_async` per turn; ADK runs
the next turn on the agent that answered last. Checks read the final-response event: its
text and `author`.

LiteLLM loads its model price map from the package, not the network
(`LITELLM_LOCAL_MODEL_COST_MAP=True`).

Run inside .bench-venvs/adk.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["OTEL_SDK_DISABLED"] = "true"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver
import scenario
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types


class AdkDriver(driver.Driver):
    framework = "adk"
    version = f"{version('google-adk')} (litellm {version('litellm')})"

    async def conversation(self, base_url: str, conv: int) -> Any:
        model = LiteLlm(model=f"openai/{scenario.MODEL}", api_base=base_url,
                        api_key=driver.API_KEY)
        agents: dict[str, LlmAgent] = {}
        for a in reversed(scenario.AGENTS):  # sub-agents first
            subs = [agents[h] for h in a.handoffs if a.name == scenario.ENTRY]
            agents[a.name] = LlmAgent(
                name=a.name, model=model, instruction=a.instructions,
                description=a.description,
                tools=[scenario.TOOL_FUNCTIONS[t] for t in a.tools], sub_agents=subs)
        runner = InMemoryRunner(agent=agents[scenario.ENTRY], app_name="traffic")
        session = await runner.session_service.create_session(app_name="traffic",
                                                              user_id="user")
        return {"runner": runner, "session": session.id}

    async def turn(self, conv: Any, text: str) -> Any:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [e async for e in conv["runner"].run_async(
            user_id="user", session_id=conv["session"], new_message=message)]

    async def outcome(self, conv: Any, result: Any) -> driver.Answer:
        finals = [e for e in result if e.is_final_response() and e.content and e.content.parts]
        if not finals:
            raise driver.CheckFailed("no final response event")
        last = finals[-1]
        text = "".join(p.text or "" for p in last.content.parts)
        return driver.Answer(text, last.author)

    async def close(self, conv: Any) -> None:
        await conv["runner"].close()


if __name__ == "__main__":
    driver.main(AdkDriver)
