"""Developer tools of the agentkit checkout: never part of the installed package (the wheel ships `agentkit/` only).

* `dev.local_llm`: builds llama.cpp's ``llama-server`` and fetches a small model, for the end-to-end tests,
  ``.ci/run`` and ``examples/quickstart.py --local``;
* `dev.make_test_data`: rebuilds ``tests/data`` (the vendor specs, samples and tool corpus the tests read)
  from the reference files it was taken from.
"""
