"""`nmt serve`: the ONNX package (or the CTranslate2 model) behind a LibreTranslate-compatible
HTTP API, with sentence-level dynamic batching (docs/serving.md).

`config` the knobs, `sentences` splitting and reassembly, `engine` the loaded model and its
reload, `batcher` the one queue and the inference threads, `limits` api keys and rate limits,
`metrics` Prometheus, `traffic` the counts of what each direction is asked (no text) and their
snapshots, `watch` what feeds them, `samples` the opt-in input samples, `protocol` the request and
response shapes, `app` the routes, `page` the demo page, `server` uvicorn with drain on SIGTERM and
reload on SIGHUP. Torch-free:
`pip install "nmt[runtime,serve]"`.
"""
