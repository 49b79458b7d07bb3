"""`settle_at_exit`: the interpreter lets go of the GIL once at exit, so runtime threads leave Python first."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_settle_at_exit_registers_one_pause_however_often_it_is_asked() -> None:
    script = textwrap.dedent(
        """
        import atexit
        from agentkit._exit import settle_at_exit
        before = atexit._ncallbacks()
        settle_at_exit()
        settle_at_exit()
        print(atexit._ncallbacks() - before)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["1"]


def test_temporal_handles_ask_for_the_pause() -> None:
    script = textwrap.dedent(
        """
        from agentkit import Agent
        from agentkit import _exit
        from agentkit.temporal import TemporalAgent

        class FakeClient:
            def get_workflow_handle(self, workflow_id):
                return workflow_id

        TemporalAgent(Agent(id="exit-t", model="test")).get_run(FakeClient(), "w1")
        print(_exit._REGISTERED)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["[True]"]
