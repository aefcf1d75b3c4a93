#!/usr/bin/env python3
"""A stand-in for TensorBoard in tests (TensorBoard is not a Debian package).

It takes TensorBoard's own flags as Cairn passes them and answers the routes the scalar dashboard
reads, under --path_prefix, from the event files under the log directories:

    GET <prefix>/                                            an HTML page naming runs and tags
    GET <prefix>/data/runs                                   ["run", ...]
    GET <prefix>/data/plugin/scalars/tags                    {run: {tag: {displayName, description}}}
    GET <prefix>/data/plugin/scalars/scalars?run=R&tag=T     [[wall_time, step, value], ...]

A run is a directory holding files with "tfevents" in their names, named by its path relative to
its log directory (with --logdir_spec NAME:DIR, "NAME/" and that path), as TensorBoard names them.
Files are read again on every request, so what a trial appends shows at once. Only scalars written
as `simple_value` are read (what cairn_harness writes). Each record's CRC-32Cs are checked; a
file is read up to its first bad or incomplete record, and a bad one is reported on stderr.

The first line on stdout is "listening on PORT" (useful with --port 0).
Standard library only: python3 fake_tensorboard.py --logdir DIR --port 0 --path_prefix /proxy/t1
"""

import argparse
import html
import http.server
import json
import os
import struct
import sys
import urllib.parse

# --- event files -------------------------------------------------------------------------------


def _crc32c(data):
    """CRC-32C (Castagnoli), bit by bit: slow, and independent of the harness's table."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def _unmasked(masked):
    rotated = (masked - 0xA282EAD8) & 0xFFFFFFFF
    return ((rotated << 15) | (rotated >> 17)) & 0xFFFFFFFF


class CorruptRecord(Exception):
    pass


def read_records(data):
    """The records of an event file's bytes; stops before an incomplete last record (a writer may
    be in the middle of it) and raises CorruptRecord at a CRC mismatch."""
    position = 0
    while len(data) - position >= 12:
        header = data[position:position + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[position + 8:position + 12])
        if _crc32c(header) != _unmasked(length_crc):
            raise CorruptRecord(f"length CRC mismatch at byte {position}")
        end = position + 12 + length + 4
        if end > len(data):
            return
        payload = data[position + 12:position + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[end - 4:end])
        if _crc32c(payload) != _unmasked(payload_crc):
            raise CorruptRecord(f"data CRC mismatch in the record at byte {position}")
        yield payload
        position = end


def _fields(message):
    """(field number, wire type, value) of a protobuf message; values of wire types 0, 1, 5 are
    ints or raw bytes, of 2 raw bytes."""
    position = 0

    def varint():
        nonlocal position
        value, shift = 0, 0
        while True:
            if position >= len(message) or shift > 63:
                raise CorruptRecord("a protobuf varint runs past its message")
            byte = message[position]
            position += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while position < len(message):
        key = varint()
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value = varint()
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            value = message[position:position + size]
            position += size
        elif wire_type == 2:
            size = varint()
            value = message[position:position + size]
            position += size
        else:
            raise CorruptRecord(f"protobuf wire type {wire_type} is not supported")
        if position > len(message):
            raise CorruptRecord("a protobuf field runs past its message")
        yield field, wire_type, value


def decode_event(payload):
    """(wall_time, step, [(tag, value), ...]) of a serialized tensorflow.Event."""
    wall_time, step, scalars = 0.0, 0, []
    for field, wire_type, value in _fields(payload):
        if field == 1 and wire_type == 1:
            (wall_time,) = struct.unpack("<d", value)
        elif field == 2 and wire_type == 0:
            step = value - (1 << 64) if value >= 1 << 63 else value
        elif field == 5 and wire_type == 2:
            for value_field, value_type, summary_value in _fields(value):
                if value_field != 1 or value_type != 2:
                    continue
                tag, simple_value = None, None
                for part, part_type, content in _fields(summary_value):
                    if part == 1 and part_type == 2:
                        tag = content.decode("utf-8", "replace")
                    elif part == 2 and part_type == 5:
                        (simple_value,) = struct.unpack("<f", content)
                if tag is not None and simple_value is not None:
                    scalars.append((tag, simple_value))
    return wall_time, step, scalars


def load_runs(logdirs):
    """{run: {tag: [[wall_time, step, value], ...]}} of every event file under `logdirs`
    ([(name or None, directory)])."""
    runs = {}
    for name, logdir in logdirs:
        for directory, subdirectories, files in os.walk(logdir):
            subdirectories.sort()
            event_files = sorted(f for f in files if "tfevents" in f)
            if not event_files:
                continue
            relative = os.path.relpath(directory, logdir)
            run = os.path.join(name, relative) if name else relative
            tags = runs.setdefault(run, {})
            for file_name in event_files:
                path = os.path.join(directory, file_name)
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                    for payload in read_records(data):
                        wall_time, step, scalars = decode_event(payload)
                        for tag, value in scalars:
                            tags.setdefault(tag, []).append([wall_time, step, value])
                except (OSError, CorruptRecord) as error:
                    print(f"fake_tensorboard: {path}: {error}", file=sys.stderr, flush=True)
    return runs


# --- the server --------------------------------------------------------------------------------


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "FakeTensorBoard/1"
    protocol_version = "HTTP/1.1"  # every answer has its Content-Length; connections stay open
    logdirs = []
    prefix = ""

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == self.prefix and self.prefix:
            return self._send(301, b"", "text/plain", {"Location": self.prefix + "/"})
        if not url.path.startswith(self.prefix + "/"):
            return self._error(404, f"not found: {url.path}")
        route = url.path[len(self.prefix):]
        query = urllib.parse.parse_qs(url.query)
        if route == "/":
            return self._page()
        runs = load_runs(self.logdirs)
        if route == "/data/runs":
            return self._json(sorted(runs))
        if route == "/data/plugin/scalars/tags":
            return self._json({run: {tag: {"displayName": tag, "description": ""} for tag in tags}
                               for run, tags in runs.items()})
        if route == "/data/plugin/scalars/scalars":
            run, tag = query.get("run", [None])[0], query.get("tag", [None])[0]
            if run is None or tag is None:
                return self._error(400, "both run and tag are required")
            if tag not in runs.get(run, {}):
                return self._error(404, f"no scalar data for run={run!r}, tag={tag!r}")
            return self._json(runs[run][tag])
        return self._error(404, f"not found: {url.path}")

    def do_HEAD(self):
        self._error(405, "only GET")

    def do_POST(self):
        self._error(405, "only GET")

    def _page(self):
        items = []
        for run, tags in sorted(load_runs(self.logdirs).items()):
            names = ", ".join(html.escape(tag) for tag in sorted(tags))
            items.append(f"<li>{html.escape(run)}: {names}</li>")
        body = ("<!doctype html><html><head><title>TensorBoard (stand-in)</title></head><body>"
                "<h1>TensorBoard (stand-in)</h1><ul>" + "".join(items) + "</ul></body></html>")
        self._send(200, body.encode("utf-8"), "text/html; charset=utf-8")

    def _json(self, value):
        self._send(200, json.dumps(value).encode("utf-8"), "application/json")

    def _error(self, status, message):
        self._send(status, message.encode("utf-8"), "text/plain; charset=utf-8")

    def _send(self, status, body, content_type, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format, *args):
        print(f"fake_tensorboard: {self.address_string()} {format % args}", file=sys.stderr,
              flush=True)


def parse_logdir_spec(spec):
    """[(name or None, directory)] of "name:dir,other:dir2" (an entry without a name is "dir")."""
    logdirs = []
    for entry in spec.split(","):
        name, separator, directory = entry.partition(":")
        if not separator or "/" in name:  # "/abs/dir" has no name
            name, directory = None, entry
        if not directory:
            raise ValueError(f"--logdir_spec entry {entry!r} names no directory")
        logdirs.append((name, directory))
    return logdirs


def main(argv=None):
    parser = argparse.ArgumentParser(description="A TensorBoard stand-in for tests.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--logdir")
    source.add_argument("--logdir_spec")
    parser.add_argument("--port", type=int, default=6006)
    address = parser.add_mutually_exclusive_group()
    address.add_argument("--host", default="localhost")
    address.add_argument("--bind_all", action="store_true")
    parser.add_argument("--path_prefix", default="")
    flags = parser.parse_args(argv)

    prefix = flags.path_prefix.rstrip("/")
    if prefix and not prefix.startswith("/"):
        parser.error(f"--path_prefix must start with '/': {flags.path_prefix!r}")
    try:
        logdirs = (parse_logdir_spec(flags.logdir_spec) if flags.logdir_spec
                   else [(None, flags.logdir)])
    except ValueError as error:
        parser.error(str(error))
    if not 0 <= flags.port <= 65535:
        parser.error(f"--port {flags.port} is not a port")

    handler = type("ConfiguredHandler", (Handler,), {"logdirs": logdirs, "prefix": prefix})
    host = "0.0.0.0" if flags.bind_all else flags.host
    try:
        server = http.server.ThreadingHTTPServer((host, flags.port), handler)
    except OSError as error:
        print(f"fake_tensorboard: cannot listen on {host}:{flags.port}: {error}", file=sys.stderr)
        return 1
    port = server.server_address[1]
    print(f"listening on {port}", flush=True)
    print(f"TensorBoard stand-in at http://{host}:{port}{prefix}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
