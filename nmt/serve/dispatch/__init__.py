"""Where each sentence goes, no HTTP in it: the served models and their reload (`served`), the router
between them, the batcher and its inference threads (decoding through `nmt.translate`'s decode step),
and the domain errors (`refusals`) the API maps to statuses. Imports `observe` only, of the server."""
