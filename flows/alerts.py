"""Failure you hear about: a Prefect automation that calls a webhook when a pipeline run fails,
crashes, or ends `Not promoted` (a challenger worse than the model in production).

The Prefect server runs it (its triggers and actions services), so it fires whether the run
was scheduled, triggered by hand or started with `python -m flows.pipeline` against the
server. The webhook gets a JSON body `{"text": "..."}` (what Slack, Mattermost and Teams
incoming webhooks read) naming the run, its final state and the reason. Create or update
both (idempotent), against the server in PREFECT_API_URL:

    python -m flows.alerts --webhook-url https://hooks.slack.com/services/T000/B000/abc123
    python -m flows.alerts --show
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import timedelta

from prefect.automations import Automation, CallWebhook, EventTrigger
from prefect.blocks.webhook import Webhook
from prefect.events.schemas.automations import Posture
from prefect.settings import PREFECT_API_URL
from pydantic import SecretStr

from flows.pipeline import NOT_PROMOTED, pipeline

AUTOMATION = "nmt-pipeline: failed or not promoted"  # one automation of this name; re-running replaces it
BLOCK = "nmt-alerts"  # the Webhook block holding the URL (a secret)
STATES = ("Failed", "Crashed", "TimedOut", NOT_PROMOTED)  # final flow-run states worth a message
PAYLOAD = ('{"text": {{ ("nmt-pipeline run " ~ flow_run.name ~ ": " ~ flow_run.state.name ~ ". "'
           ' ~ (flow_run.state.message or "")) | tojson }}}')


def install(webhook_url: str, allow_private_urls: bool = False) -> Automation:
    """Save the webhook block and (re)create the automation; returns the automation."""
    Webhook(method="POST", url=SecretStr(webhook_url), headers={"Content-Type": "application/json"},
            allow_private_urls=allow_private_urls).save(BLOCK, overwrite=True)
    block_id = Webhook.load(BLOCK)._block_document_id
    existing = _find()
    created = Automation(
        name=AUTOMATION,
        description="Calls the nmt-alerts webhook when an nmt-pipeline flow run fails, crashes, times out or "
                    "ends Not promoted (flows/alerts.py)",
        trigger=EventTrigger(
            expect={f"prefect.flow-run.{state}" for state in STATES},
            match_related={"prefect.resource.role": "flow", "prefect.resource.name": pipeline.name},
            posture=Posture.Reactive, threshold=1, within=timedelta(0)),
        actions=[CallWebhook(block_document_id=block_id, payload=PAYLOAD)],
    ).create()
    if existing is not None:  # replaced only once the new one exists: never a moment without alerts
        existing.delete()
    return created


def _find() -> Automation | None:
    try:
        return Automation.read(name=AUTOMATION)
    except ValueError:  # "Automation ... not found"
        return None


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flows.alerts", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--webhook-url", help="where the message goes (kept in the Prefect block nmt-alerts, a secret)")
    p.add_argument("--allow-private-urls", action="store_true",
                   help="allow a webhook on a private address (127.0.0.1, 10.x, ...): off by default")
    p.add_argument("--show", action="store_true", help="print the automation and exit")
    args = p.parse_args(argv)
    if not PREFECT_API_URL.value():
        print("python -m flows.alerts: error: PREFECT_API_URL is not set: point it at the Prefect server that runs "
              "the deployment (e.g. export PREFECT_API_URL=http://127.0.0.1:4200/api); an automation on a "
              "temporary server would be gone when this command ends", file=sys.stderr)
        return 2
    if not args.show and not args.webhook_url:
        p.error("--webhook-url is required (or --show)")
    try:
        if args.show:
            found = _find()
            print(found.model_dump_json(indent=2) if found else f"no automation named {AUTOMATION!r}")
            return 0 if found else 1
        automation = install(args.webhook_url, args.allow_private_urls)
    except Exception as exc:  # the server is down or refuses: say so in one line
        print(f"python -m flows.alerts: error: {type(exc).__name__}: {exc} (is PREFECT_API_URL set to a running "
              "Prefect server? `prefect config view`)", file=sys.stderr)
        return 1
    print(f"automation {automation.name!r} ({automation.id}) calls block {BLOCK!r} on: {', '.join(STATES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
