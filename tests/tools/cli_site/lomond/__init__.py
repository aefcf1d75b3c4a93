"""A stand-in for `lomond`, the WebSocket library Determined's CLI tunnels `det shell open`
through, for tests only: Debian does not package lomond and this machine has no Python package
index. It offers the part of lomond's interface Determined's CLI uses (`determined/cli/proxy.py`,
`determined/common/detlomond.py`) on top of Debian's `websocket-client` (python3-websocket):
a WebSocket whose `connect()` yields Ready, then Binary/Text for each message, then Closing and
Disconnected; `send_binary`, `close` and `add_header`. Everything else of Determined's CLI runs
unchanged.
"""

from lomond import events, session
from lomond.websocket import WebSocket

__all__ = ["WebSocket", "events", "session"]
