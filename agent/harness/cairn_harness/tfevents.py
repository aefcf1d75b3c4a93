"""TensorBoard event files for a trial's metrics, written with the standard library alone.

An event file is a sequence of records (TensorFlow's TFRecord framing):

    uint64 LE  length of the data
    uint32 LE  masked CRC-32C of those 8 length bytes
    bytes      the data: one serialized tensorflow.Event protobuf
    uint32 LE  masked CRC-32C of the data

masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8, modulo 2**32. The first event of a file
carries only `file_version: "brain.Event:2"`; each later one a Summary of scalars:

    Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
    Summary { repeated Value value = 1; }
    Value   { string tag = 1; float simple_value = 2; }

The protobuf encoding is done by hand below (a handful of fields), so no protobuf module is needed.
"""

import math
import os
import socket
import struct
import sys
import time

FILE_VERSION = "brain.Event:2"
_MASK_DELTA = 0xA282EAD8


def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data):
    """CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of `data`."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data):
    """One TFRecord around `data`."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data
            + struct.pack("<I", masked_crc32c(data)))


def _varint(value):
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _length_delimited(field, payload):
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _float32(value):
    """`value` as a little-endian float32; beyond float32's range it is an infinity, as in C."""
    try:
        return struct.pack("<f", value)
    except OverflowError:
        return struct.pack("<f", math.copysign(math.inf, value))


def _as_float(value):
    try:
        return float(value)
    except OverflowError:  # an int beyond a double's range
        return math.inf if value > 0 else -math.inf


def encode_event(wall_time, step, *, file_version=None, scalars=None):
    """A serialized Event: its time and step, with a file_version or a Summary of `scalars`
    (an iterable of (tag, number))."""
    event = struct.pack("<Bd", 1 << 3 | 1, wall_time)
    # int64 as protobuf has it: a negative step is its 64-bit two's complement.
    event += _varint(2 << 3 | 0) + _varint(step & 0xFFFFFFFFFFFFFFFF)
    if file_version is not None:
        event += _length_delimited(3, file_version.encode("utf-8"))
    if scalars is not None:
        summary = b""
        for tag, number in scalars:
            value = (_length_delimited(1, tag.encode("utf-8")) + bytes([2 << 3 | 5])
                     + _float32(_as_float(number)))
            summary += _length_delimited(1, value)
        event += _length_delimited(5, summary)
    return event


def is_number(value):
    """Whether TensorBoard can plot `value`: an int or float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class EventFileWriter:
    """One event file, `events.out.tfevents.<unix seconds>.<hostname>` in `directory` (created when
    missing), appended to and flushed record by record so that a TensorBoard reading it while the
    trial runs sees every metric reported so far. Not thread-safe."""

    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        now = time.time()
        self.path = os.path.join(directory,
                                 f"events.out.tfevents.{int(now)}.{socket.gethostname()}")
        # Append: a second process of the same trial on this host within the same second adds its
        # events to the same file, which TensorBoard reads like one.
        self._file = open(self.path, "ab")
        self._write(encode_event(now, 0, file_version=FILE_VERSION))

    def add_scalars(self, step, scalars, wall_time=None):
        """Writes one event at `step` with the numeric ones of `scalars` ({tag: number})."""
        numeric = [(tag, value) for tag, value in scalars.items() if is_number(value)]
        if not numeric:
            return
        self._write(encode_event(time.time() if wall_time is None else wall_time, step,
                                 scalars=numeric))

    def _write(self, event):
        self._file.write(encode_record(event))
        self._file.flush()

    def close(self):
        self._file.close()


def trial_event_directory(storage, experiment_id, trial_id):
    """Where a trial's event files go under the experiment's checkpoint storage."""
    return os.path.join(storage, "tensorboard", "experiment", str(experiment_id), "trial",
                        str(trial_id))


class TrialEventFiles:
    """The harness's side: a trial's metrics as `<group>/<metric>` scalars at the steps (batches)
    completed. Writing them is a service, not part of the trial: the first failure prints one
    warning line to stderr (the trial's log) and ends the writing; the trial goes on."""

    def __init__(self, storage, experiment_id, trial_id):
        self._directory = (trial_event_directory(storage, experiment_id, trial_id)
                           if storage and os.path.isabs(storage) else None)
        self._writer = None
        self._failed = False

    def report(self, group, step, metrics):
        if self._failed:
            return
        try:
            if self._directory is None:
                raise ValueError("the experiment has no absolute checkpoint storage path")
            if self._writer is None:
                self._writer = EventFileWriter(self._directory)
            self._writer.add_scalars(step, {f"{group}/{name}": value
                                            for name, value in metrics.items()})
        except Exception as error:  # whatever it is, the trial must not fail for it
            self._failed = True
            print(f"cairn-harness: warning: TensorBoard event files are not written: {error}",
                  file=sys.stderr, flush=True)
