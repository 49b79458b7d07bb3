"""The parts of the `agentkit` command line (`agentkit.cli` is its entry point and parser).

* `_json`: ``--json``: one JSON document on stdout, ``{"format": "agentkit.<command>/<version>", ...}``;
* `_terminal`: what is shown only on a terminal (progress), and output to a reader that went away;
* `_errors`: an exception as the one message the command prints, in the command line's words, and its exit status;
* `_tools`: ``inspect``, ``lint`` and ``call``; `_run`: ``run``.
"""
