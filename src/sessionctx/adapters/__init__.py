"""sessionctx inside agent frameworks: each module plugs the fold in where its framework calls
the model, and hands back the framework's own objects.

Each adapter needs its framework, installed with an extra of the same name:

- `sessionctx.adapters.pydantic_ai` (`pydantic-ai`): a history processor;
- `sessionctx.adapters.openai_agents` (`openai-agents`): `SessionctxSession` on a sessionctx
  store, and a `call_model_input_filter`;
- `sessionctx.adapters.langchain` (`langchain`): a chat message history, an agent middleware;
- `sessionctx.adapters.litellm` (`litellm`): a `CustomLogger` whose pre-call hooks repair
  `messages`.

Nothing here imports a framework until its module is imported.
"""
