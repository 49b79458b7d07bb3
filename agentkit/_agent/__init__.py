"""The machinery behind `agentkit.agent.Agent`: a run as layers, one job per module.

Each module imports only modules of the layers below its own (tests/test_import_graph.py holds the
order); bottom first:

* records: `pending` (what a pause waits for), `interrupts`, `_progress` (what a call reports to its run),
  `_usercode` (the application's code: its own `CancelledError` is its failure), `state` (`RunState`:
  what has happened; `RunRequest`: what a resume needs of what was asked), `sessions`, `_deps`,
  `_instructions`;
* `results` (`RunResult`, approvals), `_toolset` (the run's tools, deferred tools, the search tool);
* `hooks` (the execution engine: in process, or a durable one), `display` (transforms, failing closed),
  `stream` (`AgentStream`), `_output` (the output type: asking for it, reading it);
* `_options` (`RunOptions`: one call's options, declared once), then `config` (`RunConfig`: what one run
  was asked, frozen, with its `machinery` bits; `AgentSpec`: the agent as a run reads it);
* helpers of ``(config, state)`` returning outcomes: `observe`, `_limits`, `_approvals`, `_emit`,
  `_answer`, `_intercept` (hooks), `_background`, `_steps` (plan a step), `_calls` (the tool-call
  pipeline), `_request` (one model request);
* `loop` (`RunLoop`: plan -> request -> calls -> record), `_setup` (a call's config and state),
  `resume`, `runs` (the entry points), `subagents`.

Users import the public names from `agentkit` or `agentkit.agent`; the architecture page of the
contributor docs draws the layers and the flow of one run.
"""
