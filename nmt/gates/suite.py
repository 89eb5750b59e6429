"""Great Expectations, run the way every gate needs it: one suite on one DataFrame.

GX 1.x in an ephemeral context (nothing written to disk), its progress bars and INFO logs
off; a fresh context per suite, because names must be unique within a context. The result
is kept without GX's random ids and timestamps, so the same data gives the same report (and
a forced re-run leaves dvc.lock unchanged).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from nmt.errors import GateError

if TYPE_CHECKING:
    import pandas as pd


def run_suite(name: str, df: pd.DataFrame, expectations: list[Any]) -> dict[str, Any]:
    """Validate `df` against `expectations` in a fresh ephemeral GX context; return the JSON result."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    for name_ in list(logging.root.manager.loggerDict):
        if name_.startswith("great_expectations."):
            logging.getLogger(name_).setLevel(logging.NOTSET)
    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = ctx.data_sources.add_pandas(name).add_dataframe_asset("frame").add_batch_definition_whole_dataframe("all")
    suite = ctx.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
    definition = ctx.validation_definitions.add(gx.ValidationDefinition(name=name, data=batch, suite=suite))
    result = definition.run(batch_parameters={"dataframe": df}).to_json_dict()
    errors = [r["exception_info"]["exception_message"] for r in result["results"]
              if r.get("exception_info", {}).get("raised_exception")]
    if errors:
        raise GateError(f"{name}: Great Expectations could not evaluate the suite: {errors[0]}")
    return _without_run_identity(result)


RUN_IDENTITY = {"id", "validation_id", "checkpoint_id", "run_id", "validation_time", "ge_load_time"}


def _without_run_identity(value: Any) -> Any:
    """`value` without the keys that differ between two runs on the same data (uuids, clock)."""
    if isinstance(value, dict):
        return {k: _without_run_identity(v) for k, v in value.items() if k not in RUN_IDENTITY}
    if isinstance(value, list):
        return [_without_run_identity(v) for v in value]
    return value
