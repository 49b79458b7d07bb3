"""The machinery behind `agentkit.agent.Agent`, one job per module.

* `results`: what a run returns (`RunResult`, `Step`) and the approval records (`PendingApproval`,
  `Approval`), with the state a paused run needs to continue;
* `loop`: one run of the loop (model turn -> tool calls -> results -> next turn), budgets and approvals;
* `display`: what displays and transcripts see of a call (`ToolTransform`s applied, failing closed);
* `stream`: the bridge from a run's events to the async iterator `Agent.stream` returns;
* `subagents`: an agent as another agent's tool, its events and usage forwarded to the parent run;
* `sessions`: the MCP sessions an agent holds open while it runs.

Users import the public names from `agentkit` or `agentkit.agent`.
"""
