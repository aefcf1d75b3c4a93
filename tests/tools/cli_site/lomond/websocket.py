"""lomond's WebSocket, as Determined's CLI uses it, on websocket-client."""

import threading

import websocket as websocket_client

from lomond import events
from lomond.session import WebsocketSession


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


class WebSocket:
    def __init__(self, url, proxies=None, **_):
        self.url = url
        self.proxies = proxies
        self._headers = []
        self._connection = None
        self._lock = threading.Lock()

    def add_header(self, name, value):
        self._headers.append(f"{_text(name)}: {_text(value)}")

    def connect(self, session_class=None, ping_rate=0, **_):
        session = (session_class or WebsocketSession)(self)
        sslopt = {"context": session.ctx} if self.url.startswith("wss:") else None
        yield events.Connecting(url=self.url)
        try:
            connection = websocket_client.create_connection(
                self.url, header=self._headers, sslopt=sslopt, enable_multithread=True
            )
        except websocket_client.WebSocketBadStatusException as error:
            yield events.Rejected(response=error, reason=str(error))
            return
        except Exception as error:  # noqa: BLE001 - every failure to connect is ConnectFail
            yield events.ConnectFail(reason=str(error))
            return
        with self._lock:
            self._connection = connection
        yield events.Ready(response=None, protocol=None, extensions=set())
        while True:
            try:
                opcode, data = connection.recv_data(control_frame=False)
            except (websocket_client.WebSocketException, OSError) as error:
                yield events.Disconnected(reason=str(error), graceful=False)
                return
            if opcode == websocket_client.ABNF.OPCODE_BINARY:
                yield events.Binary(data=data)
            elif opcode == websocket_client.ABNF.OPCODE_TEXT:
                yield events.Text(text=_text(data))
            elif opcode == websocket_client.ABNF.OPCODE_CLOSE:
                yield events.Closing(code=None, reason="closed by the server")
                yield events.Disconnected(reason="closed", graceful=True)
                return

    def send_binary(self, data):
        with self._lock:
            connection = self._connection
        connection.send_binary(data)

    def close(self, code=1000, reason=b"goodbye"):
        with self._lock:
            connection = self._connection
        if connection is None:
            return
        try:
            connection.send_close()
        except (websocket_client.WebSocketException, OSError):
            pass
        connection.shutdown()
