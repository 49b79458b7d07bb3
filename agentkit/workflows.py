"""`Workflow`: an ordered chain of typed steps, runnable on its own and exposable to a model as one tool.

```python
research = Workflow.start(search, id="research").then(rank).then(summarize)
summary = await research.run(topic="tides")          # typed: the arguments of `search`, the result of `summarize`
agent = Agent(..., workflows={"research": research})  # the model sees the tool "workflow-research"
```

Each step is a function (``def`` or ``async def``) or a `Tool`; its schemas are inferred exactly as for
tools. The workflow's input schema is its first step's, its output schema its last step's.

How a value passes from one step to the next: a step with one parameter (besides `ToolContext`)
receives the previous result as that argument; a step with several parameters receives the fields of
the previous result (a dict, pydantic model, dataclass or TypedDict) as its arguments. Either way the
value is validated against the step's input schema, as strictly as a model's tool call, so a mismatch
between steps fails with an error naming both steps.
"""

from __future__ import annotations as _annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Generic, cast, overload

from typing_extensions import ParamSpec, TypeVar

from ._describe import describe_exception
from ._json_schema import JsonSchema
from ._jsonish import is_object
from .context import ToolContext
from .exceptions import (
    ModelRetry,
    ToolDefinitionError,
    ToolError,
    ToolInputError,
    WorkflowStepError,
)
from .tools import ApprovalPolicy, Tool, ToolTransform, _check_policy  # pyright: ignore[reportPrivateUsage]

__all__ = ["Workflow", "WorkflowStepError"]

P = ParamSpec("P")
R = TypeVar("R")
R2 = TypeVar("R2")

StepCallback = Callable[[str, Any], None]
"""``on_step(step_name, output)``: called after each step with its validated result."""


_WITHHELD = "details withheld: step {step!r} redacts its values (a `transform`)"


def _redacts(step: Tool[..., Any]) -> bool:
    """Whether a step's display transform hides its values, so its error messages must not be passed on."""
    rules = step.transform
    return rules is not None and (rules.input is not None or rules.output is not None or rules.error is not None)


def _as_step(step: Any) -> Tool[..., Any]:
    if isinstance(step, Tool):
        return cast("Tool[..., Any]", step)
    if isinstance(step, Workflow):
        return step.as_tool()
    if callable(step):
        return Tool(step)
    raise ToolDefinitionError(repr(step), ["a workflow step must be a function, a Tool or a Workflow"])


def _check_link(previous: Tool[..., Any], step: Tool[..., Any]) -> None:
    if len(step.schema.params) == 0:
        raise ToolDefinitionError(
            step.schema.qualname,
            [f"as a workflow step after {previous.id!r} it must take a parameter to receive that step's result"],
        )
    out = previous.output_schema
    if len(step.schema.params) > 1 and out is not None and out.get("type") not in (None, "object"):
        raise ToolDefinitionError(
            step.schema.qualname,
            [
                f"it takes {len(step.schema.params)} parameters, so the previous step {previous.id!r} must return "
                f"an object whose fields are its arguments, but it returns type {out.get('type')!r}; take one "
                "parameter instead"
            ],
        )


class Workflow(Generic[P, R]):
    """An ordered chain of typed steps; see the module documentation for how values flow.

    Build it with `Workflow.start(first).then(...)` (statically typed: `run` takes the first step's
    arguments and returns the last step's result) or `Workflow(id, [step, ...])`.

    Args:
        id: the workflow's name (the tool's id when exposed).
        steps: the steps in order: functions, tools, or other workflows.
        description: what the workflow does, for models; defaults to the first step's description.
    """

    def __init__(
        self,
        id: str,  # noqa: A002 - the public name DESIGN.md uses for tools and agents
        steps: Sequence[Callable[..., Any]],
        *,
        description: str | None = None,
    ) -> None:
        if not steps:
            raise ToolDefinitionError(f"Workflow {id!r}", ["a workflow needs at least one step"])
        tools = tuple(_as_step(s) for s in steps)
        for previous, step in zip(tools, tools[1:], strict=False):
            _check_link(previous, step)
        self.id = id
        self.steps: tuple[Tool[..., Any], ...] = tools
        """The steps, each as a `Tool`."""
        self._description = description
        self._tool: Tool[..., Any] | None = None
        self._signature = inspect.signature(tools[0].fn)

    @overload
    @classmethod
    def start(
        cls,
        first: Callable[P, Coroutine[Any, Any, R2]],
        *,
        id: str,
        description: str | None = None,
    ) -> Workflow[P, R2]: ...
    @overload
    @classmethod
    def start(
        cls,
        first: Callable[P, R2],
        *,
        id: str,
        description: str | None = None,
    ) -> Workflow[P, R2]: ...
    @classmethod
    def start(
        cls,
        first: Callable[..., Any],
        *,
        id: str,  # noqa: A002
        description: str | None = None,
    ) -> Workflow[..., Any]:
        """A workflow of one step; add more with `then`."""
        return Workflow(id, [first], description=description)

    @overload
    def then(self, step: Callable[[R], Coroutine[Any, Any, R2]]) -> Workflow[P, R2]: ...
    @overload
    def then(self, step: Callable[[R], R2]) -> Workflow[P, R2]: ...
    @overload
    def then(self, step: Callable[..., Coroutine[Any, Any, R2]]) -> Workflow[P, R2]: ...
    @overload
    def then(self, step: Callable[..., R2]) -> Workflow[P, R2]: ...
    def then(self, step: Callable[..., Any]) -> Workflow[Any, Any]:
        """A new workflow: these steps, then `step` (which receives the current last step's result)."""
        return Workflow(self.id, [*self.steps, step], description=self._description)

    def __repr__(self) -> str:
        return f"Workflow(id={self.id!r}, steps={[s.id for s in self.steps]!r})"

    # ---- what a model is told --------------------------------------------------------------------

    @property
    def description(self) -> str:
        """The explicit description, else the first step's."""
        return self._description if self._description is not None else self.steps[0].description

    @property
    def input_schema(self) -> JsonSchema:
        """JSON Schema of the workflow's arguments: the first step's input schema."""
        return self.steps[0].input_schema

    @property
    def output_schema(self) -> JsonSchema | None:
        """JSON Schema of the workflow's result: the last step's output schema."""
        return self.steps[-1].output_schema

    # ---- running ---------------------------------------------------------------------------------

    async def run(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run with the first step's arguments (validated like a model's call); return the last result."""
        bound = self._signature.bind_partial(*args, **kwargs)
        context_params = self.steps[0].schema.context_params
        context = next((v for k, v in bound.arguments.items() if k in context_params), None)
        arguments = {k: v for k, v in bound.arguments.items() if k not in context_params}
        return await self.ainvoke(arguments, context=context)

    def run_sync(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """`run` for scripts: runs its own event loop."""
        return asyncio.run(self.run(*args, **kwargs))

    async def ainvoke(
        self,
        args: Mapping[str, Any] | str | bytes = "{}",
        *,
        context: ToolContext[Any] | None = None,
        on_step: StepCallback | None = None,
    ) -> R:
        """Validate `args` (a mapping or JSON text) against the first step, run every step, return the result.

        Args:
            args: the workflow's arguments.
            context: the `ToolContext` steps that ask for one receive (deps, progress, cancellation).
            on_step: called after each step with its name and validated result.

        Raises:
            ToolInputError: `args` do not fit the first step's input schema.
            WorkflowStepError: a later step rejected the previous result, or a step failed.
            ModelRetry, ToolError: raised by a step, passed on as they are (so a model sees them).
        """
        steps = self.steps
        value: Any = None
        for index, step in enumerate(steps):
            name = step.id
            if index and context is not None and context.cancelled.is_set():
                # the run was cancelled: the remaining steps do not start (the model is told so on resume)
                raise ToolError(f"Workflow {self.id!r} was cancelled before step {name!r}; its earlier steps ran.")
            try:
                if index == 0:
                    kwargs = step.schema.validate_arguments(self.id, args)
                else:
                    kwargs = step.schema.validate_arguments(name, self._arguments_for(step, value))
            except ToolInputError as exc:
                if index == 0:
                    raise  # the caller's (or the model's) own arguments: the details help fix them
                detail = _WITHHELD.format(step=name) if _redacts(step) else str(exc)
                raise WorkflowStepError(
                    self.id, name, index, f"rejected the result of {steps[index - 1].id!r}: {detail}"
                ) from exc
            try:
                value = await step.run(kwargs, context, name=name)
                value = step.schema.validate_output(name, value)
            except (ModelRetry, ToolError) as exc:
                if index == 0 or not _redacts(step):
                    raise
                raise type(exc)(f"step {name!r} failed; {_WITHHELD.format(step=name)}") from exc
            except Exception as exc:
                # A redacting step's message may quote the values it hides; a vendor error's body, a key.
                if _redacts(step):
                    message = f"{type(exc).__name__}; {_WITHHELD.format(step=name)}"
                else:
                    message = describe_exception(exc)
                raise WorkflowStepError(self.id, name, index, message) from exc
            if on_step is not None:
                on_step(name, value)
            if context is not None:
                context.emit({"workflow": self.id, "step": name, "index": index})
        result: R = value
        return result

    def invoke(self, args: Mapping[str, Any] | str | bytes = "{}", *, on_step: StepCallback | None = None) -> R:
        """`ainvoke` for scripts: runs its own event loop."""
        return asyncio.run(self.ainvoke(args, on_step=on_step))

    @staticmethod
    def _arguments_for(step: Tool[..., Any], value: Any) -> Mapping[str, Any]:
        params = step.schema.params
        if len(params) == 1:
            return {params[0].name: value}
        from pydantic_core import to_jsonable_python

        fields = to_jsonable_python(value, fallback=repr)
        if not is_object(fields):
            raise ToolInputError(
                step.id, [_detail(f"expected an object with the fields {[p.name for p in params]}", value)]
            )
        return fields

    # ---- as a tool -------------------------------------------------------------------------------

    def as_tool(self) -> Tool[..., Any]:
        """This workflow as one tool: the first step's input schema, the last step's output schema."""
        if self._tool is None:
            workflow = self

            async def run_workflow(ctx: ToolContext[Any], arguments: dict[str, Any]) -> Any:
                try:
                    return await workflow.ainvoke(arguments, context=ctx)
                except ToolInputError as exc:
                    # The JSON Schema check passed but the first step's own validation did not: the
                    # model can fix its arguments, so it is a retry, not a crash.
                    raise ModelRetry(str(exc)) from exc

            self._tool = _WorkflowTool(
                self, run_workflow, id=self.id, description=self.description, input_schema=dict(self.input_schema)
            )
            self._tool._nests_runs = True  # type: ignore[attr-defined]  # steps may run agents: no run slot
        return self._tool


def _detail(message: str, value: Any) -> Any:
    from .exceptions import ErrorDetail

    return ErrorDetail("$", message, value, kind="object_type")


class _WorkflowTool(Tool[..., Any]):
    """A workflow as a tool: its output schema is the workflow's, and so is its approval.

    A step that needs approval makes the whole workflow need it (the run stops before any step runs),
    decided at call time from the steps as they are then, so a policy set on a step after the workflow
    was built still counts. The first step's policy (and one set on this tool) sees the first step's
    validated arguments; a later step's policy cannot see its arguments before the earlier steps run, so
    a later step with a policy makes every call need approval (fail closed).
    """

    def __init__(self, workflow: Workflow[..., Any], fn: Callable[..., Any], **options: Any) -> None:
        self.workflow = workflow
        self._own_policy: ApprovalPolicy = False
        self._own_transform: ToolTransform | None = None
        super().__init__(fn, **options)

    @property
    def transform(self) -> ToolTransform | None:
        """One set on this tool, else the steps': the first step's for the input, the last's for the result.

        Read at call time, like the approval. A later step's transform makes the workflow withhold that
        step's error messages instead (see `Workflow.ainvoke`).
        """
        if self._own_transform is not None:
            return self._own_transform
        first, last = self.workflow.steps[0].transform, self.workflow.steps[-1].transform
        if first is None and last is None:
            return None
        return ToolTransform(
            input=first.input if first else None,
            input_delta=first.input_delta if first else None,
            approval=first.approval if first else None,
            progress=first.progress if first else None,
            output=last.output if last else None,
        )

    @transform.setter
    def transform(self, value: ToolTransform | None) -> None:
        self._own_transform = value

    @property
    def output_schema(self) -> JsonSchema | None:
        return self.workflow.output_schema

    @property
    def requires_approval(self) -> ApprovalPolicy:
        """True when a step (or this tool) always needs approval, False when none ever does, else a policy."""
        policies = [self._own_policy, *(step.requires_approval for step in self.workflow.steps)]
        if all(policy is False for policy in policies):
            return False
        if any(policy is True for policy in policies):
            return True
        return self.needs_approval

    # a read-write property over Tool's attribute of the same type (pyright wants a plain attribute)
    @requires_approval.setter
    def requires_approval(self, value: ApprovalPolicy) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._own_policy = _check_policy(self.schema.qualname, value)

    def approval_arguments(
        self, arguments: Mapping[str, Any] | str | bytes, *, name: str | None = None
    ) -> dict[str, Any]:
        """The first step's view of `arguments`: the workflow's input is the first step's."""
        return self.workflow.steps[0].approval_arguments(arguments, name=name or self.id)

    def needs_approval(self, arguments: dict[str, Any]) -> bool:
        first, *later = self.workflow.steps
        own = self._own_policy
        decided = own(arguments) if callable(own) else own
        if decided is not False or any(step.requires_approval is not False for step in later):
            return True
        return first.requires_approval is not False and first.needs_approval(arguments)
