"""One pipeline run at a time: the one-slot Prefect global concurrency limit `nmt-pipeline`.

A second run waits for the slot up to its `lock_timeout_s`, then fails with `PipelineBusy`
without running anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

PIPELINE_LIMIT = "nmt-pipeline"  # Prefect global concurrency limit: one pipeline run at a time


class PipelineBusy(RuntimeError):
    """Another pipeline run holds the `nmt-pipeline` concurrency slot."""


def ensure_pipeline_limit() -> None:
    """Create the one-slot global concurrency limit `nmt-pipeline` if missing (re-arm it if changed)."""
    with get_client(sync_client=True) as client:
        try:
            existing = client.read_global_concurrency_limit_by_name(PIPELINE_LIMIT)
        except ObjectNotFound:
            try:
                client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=PIPELINE_LIMIT, limit=1))
            except ObjectAlreadyExists:  # another first run created it meanwhile
                pass
            return
        if existing.limit != 1 or not existing.active:
            client.update_global_concurrency_limit(PIPELINE_LIMIT, GlobalConcurrencyLimitUpdate(limit=1, active=True))


@contextmanager
def pipeline_lock(timeout_s: float | None) -> Iterator[None]:
    """Hold the `nmt-pipeline` slot for the block; wait up to `timeout_s` (None: forever)."""
    ensure_pipeline_limit()
    stack = ExitStack()  # the slot is taken here, so only a timeout while waiting for it is PipelineBusy
    try:
        stack.enter_context(concurrency(PIPELINE_LIMIT, occupy=1, timeout_seconds=timeout_s, strict=True,
                                        raise_on_lease_renewal_failure=False))
    except TimeoutError:
        raise PipelineBusy(f"another nmt pipeline run holds the Prefect concurrency limit {PIPELINE_LIMIT!r} "
                           f"(waited {timeout_s:g} s); nothing was run. Wait for it to finish (Prefect UI: Runs, "
                           "Concurrency) or pass a larger lock_timeout_s") from None
    with stack:
        yield
