"""`nmt serve`: the ONNX package (or the CTranslate2 model) behind a LibreTranslate-compatible
HTTP API, with sentence-level dynamic batching (docs/serving.md).

Three rooms, each importing only from the rooms before it, on top of `nmt.translate` (the text
path every caller shares): `observe/` (metrics, traffic counts, samples) -> `dispatch/` (the served
packages and their reload, the router, the batcher, domain errors) -> `api/` (options, protocol,
keys and limits, state, routes, files, the demo page, uvicorn with drain on SIGTERM and reload on
SIGHUP). Torch-free:
`pip install "nmt[runtime,serve]"`.
"""
