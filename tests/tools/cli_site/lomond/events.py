"""The events of lomond's `WebSocket.connect()` that Determined's CLI looks at."""


class Event:
    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        fields = ", ".join(f"{key}={value!r}" for key, value in self.__dict__.items())
        return f"{type(self).__name__}({fields})"


class Connecting(Event):
    pass


class ConnectFail(Event):
    pass


class Rejected(Event):
    pass


class Ready(Event):
    pass


class Binary(Event):
    pass


class Text(Event):
    pass


class ProtocolError(Event):
    pass


class Closing(Event):
    pass


class Closed(Event):
    pass


class Disconnected(Event):
    pass
