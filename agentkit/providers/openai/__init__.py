"""OpenAI: Chat Completions and Responses, in one folder.

* `_dialect.py`: the OpenAI JSON Schema dialect (strict structured outputs), shared by both APIs;
* `_chat.py`: Chat Completions wire codec (tools, calls, results, conversations) and its stream decoder;
* `_responses.py`: Responses wire codec and its stream decoder;
* `_client.py`: the model clients over the official ``openai`` SDK (imported on first use).

```python
from agentkit.providers.openai import OpenAIChatModel, OpenAIChatProvider

payload = OpenAIChatProvider().format_tools(tools)
model = OpenAIChatModel("gpt-4.1")
```
"""

from __future__ import annotations as _annotations

from ._chat import OpenAIChatProvider
from ._client import OpenAIChatModel, OpenAIResponsesModel
from ._dialect import OpenAIDialect
from ._responses import OpenAIResponsesProvider

__all__ = ["OpenAIChatModel", "OpenAIChatProvider", "OpenAIDialect", "OpenAIResponsesModel", "OpenAIResponsesProvider"]
