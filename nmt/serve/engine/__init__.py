"""The translation engine, no HTTP in it: the loaded package (`package`), sentence splitting, spans and
the input guard, decoding, glossaries and their term swap, the router between packages, the batcher
and its inference threads, and the domain errors (`refusals`) the API maps to statuses. Imports
`observe` only, of the server."""
