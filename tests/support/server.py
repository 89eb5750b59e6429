"""A stdlib HTTP server on 127.0.0.1 for download tests."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path


class Server:
    """A stdlib HTTP server on 127.0.0.1 serving a directory, with scripted failures."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.failures: dict[str, list[int]] = {}  # path -> status codes to answer first
        self.requests: list[str] = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(server.root), **kwargs)

            def do_GET(self):  # noqa: N802 (stdlib name)
                server.requests.append(self.path)
                queued = server.failures.get(self.path)
                if queued:
                    self.send_error(queued.pop(0))
                    return
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
