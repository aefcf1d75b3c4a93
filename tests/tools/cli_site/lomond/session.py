"""lomond's session class, which Determined subclasses to choose how TLS is verified."""

import ssl


class WebsocketSession:
    def __init__(self, websocket):
        self.websocket = websocket
        self.ctx = ssl.create_default_context()

    def _wrap_socket(self, sock, host):
        return self.ctx.wrap_socket(sock, server_hostname=host)
