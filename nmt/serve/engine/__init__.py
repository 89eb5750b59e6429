"""The server's side of decoding, no HTTP in it: the loaded packages and their reload (`package`), the
router between packages, the batcher and its inference threads (decoding through `nmt.translate`),
and the domain errors (`refusals`) the API maps to statuses. Imports `observe` only, of the server."""
