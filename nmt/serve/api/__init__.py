"""The HTTP API on top of the dispatch room and `nmt.translate`: options, the LibreTranslate protocol, keys and
limits, the server state, the routes, the file store and file routes, the demo page, connections
and the uvicorn server. The only room that imports Starlette or uvicorn."""
