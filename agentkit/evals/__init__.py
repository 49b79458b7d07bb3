"""Scoring tool calling: `agentkit eval`, BFCL's questions and checker, and users' own case files.

```python
from agentkit.evals import evaluate

report = await evaluate(model, "bfcl:simple_python,multiple", concurrency=2)
print(report.text())            # accuracy per category and tool, why questions failed
report.to_json()                # the stable shape of `agentkit eval --json`
```

A dataset is BFCL v4's single-turn questions (shipped with the package, `bfcl_cases`) or a case file of
your own (`load_cases`). Calls are judged by BFCL's AST rules (`check_calls`), written here and checked
against bfcl-eval's own checker (`self_test`). See the evals guide in the docs.
"""

from ._api import evaluate, evaluate_sync, load_dataset, sample
from ._bfcl import BFCL_CATEGORIES, BFCL_VERSION, bfcl_cases, bfcl_registry, json_schema, parse_bfcl_spec
from ._cases import EvalCase, EvalDataError, ExpectedCall, function_spec_of, load_cases
from ._checker import (
    ERROR_CLASSES,
    CheckMode,
    ErrorClass,
    FunctionSpec,
    ParamSpec,
    Verdict,
    check_calls,
    decode_calls,
    error_class,
    function_spec,
    standardize,
)
from ._repair import Repair, repair_arguments
from ._report import FORMAT, EvalReport, Score
from ._runner import CaseResult, Progress, run_case, run_cases
from ._selftest import Probe, SelfTestReport, consistent, probes, self_test

__all__ = [
    "BFCL_CATEGORIES",
    "BFCL_VERSION",
    "ERROR_CLASSES",
    "FORMAT",
    "CaseResult",
    "CheckMode",
    "ErrorClass",
    "EvalCase",
    "EvalDataError",
    "EvalReport",
    "ExpectedCall",
    "FunctionSpec",
    "ParamSpec",
    "Probe",
    "Progress",
    "Repair",
    "Score",
    "SelfTestReport",
    "Verdict",
    "bfcl_cases",
    "bfcl_registry",
    "check_calls",
    "consistent",
    "decode_calls",
    "error_class",
    "evaluate",
    "evaluate_sync",
    "function_spec",
    "function_spec_of",
    "json_schema",
    "load_cases",
    "load_dataset",
    "parse_bfcl_spec",
    "probes",
    "repair_arguments",
    "run_case",
    "run_cases",
    "sample",
    "self_test",
    "standardize",
]
