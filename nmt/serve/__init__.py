"""`nmt serve`: the ONNX package (or the CTranslate2 model) behind a LibreTranslate-compatible
HTTP API, with sentence-level dynamic batching (docs/serving.md).

Four rooms, each importing only from the rooms before it:
`observe/` (metrics, traffic counts, samples) -> `engine/` (the package, sentences, decoding,
glossaries, the router, the batcher, domain errors) -> `markup/` (HTML, .docx and .srt as units,
tag alignment, `formats/`) -> `api/` (options, protocol, keys and limits, state, routes, files,
the demo page, uvicorn with drain on SIGTERM and reload on SIGHUP). Torch-free:
`pip install "nmt[runtime,serve]"`.
"""
