#!/usr/bin/env python3
"""GPU-hours per user and per workspace, read from Cairn's event log on Kafka without Cairn code.

It reads the topic <prefix>.events from offset 0 to its end as of the start, decodes every record
(a bare cairn.events.Envelope) with the schema Cairn ships (share/cairn/events.desc, or the output
of `cairn replay schema`), ignores what the writer-epoch fence rules out, and charges each
allocation that ended its slots times the time it held them, by the events' own times: the
definition in docs/events.md ("GPU-hours"), the one `cairn replay usage` uses too.

Needs Debian's python3-confluent-kafka and python3-protobuf (run it with /usr/bin/python3).

  gpu_hours.py --brokers HOST:PORT[,...] --descriptor-set events.desc [--topic-prefix cairn]
               [--format table|json]
"""

import argparse
import json
import sys
import warnings

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from google.protobuf import descriptor_pb2, message_factory
from google.protobuf.message import DecodeError

MICROS_PER_HOUR = 3600 * 1_000_000
UNCATEGORIZED = 1  # workspace 1, built in; 0 in an event (older logs) means it too


def envelope_class(descriptor_set_path):
    """The Envelope message class, built from a FileDescriptorSet at run time."""
    try:
        with open(descriptor_set_path, "rb") as f, warnings.catch_warnings():
            # The C parser only warns about some malformed input, which is refused below all
            # the same (no Envelope in it).
            warnings.simplefilter("ignore")
            files = descriptor_pb2.FileDescriptorSet.FromString(f.read()).file
            return message_factory.GetMessages(files)["cairn.events.Envelope"]
    except OSError as error:
        raise SystemExit(f"cannot read {descriptor_set_path}: {error.strerror}")
    except (DecodeError, KeyError, TypeError):
        raise SystemExit(f"{descriptor_set_path} is not a FileDescriptorSet of Cairn's events "
                         "(write one with `cairn replay schema > events.desc`)")


def read_log(brokers, topic, envelope, timeout_seconds):
    """Yields (offset, Envelope) for offsets 0 .. the end of the topic as of the call."""
    consumer = Consumer({
        "bootstrap.servers": brokers,
        # assign() below: nothing joins a group or commits, but the client wants an id.
        "group.id": "cairn-gpu-hours-example",
        "enable.auto.commit": False,
        "enable.partition.eof": False,
    })
    try:
        partition = TopicPartition(topic, 0)
        low, end = consumer.get_watermark_offsets(partition, timeout=timeout_seconds)
        if low > 0:
            raise SystemExit(f"{topic} no longer holds offsets 0 to {low - 1} (retention deleted "
                             "them): GPU-hours need the whole log")
        if end == 0:
            return
        consumer.assign([TopicPartition(topic, 0, 0)])
        next_offset = 0
        while next_offset < end:
            message = consumer.poll(timeout_seconds)
            if message is None:
                raise SystemExit(f"{topic}: nothing arrived for {timeout_seconds} s at offset "
                                 f"{next_offset} (the end is {end})")
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise KafkaException(message.error())
            if message.offset() >= end:
                break
            # The log has no gaps: the Kafka offset is the event's offset (the envelope's own
            # offset field is not filled in on the topic).
            yield message.offset(), envelope.FromString(message.value())
            next_offset = message.offset() + 1
    finally:
        consumer.close()


class UsageLedger:
    """The fold of docs/events.md, "GPU-hours": the same as replay/usage.cpp."""

    def __init__(self):
        self.newest_epoch = 0
        self.log_end = 0
        self.tasks = {}            # task id -> {user, job, exited, allocation or None}
        self.job_workspaces = {}   # job id -> workspace id
        self.workspace_names = {UNCATEGORIZED: "Uncategorized"}
        self.users = {}            # user -> [allocations, slot micros]
        self.workspaces = {}       # workspace id -> [allocations, slot micros]
        self.open_allocations = 0

    def _charge(self, allocation, agent_id, end_micros):
        held = max(0, end_micros - allocation["start"])
        for agent in [a for a in allocation["parts"] if agent_id is None or a == agent_id]:
            slot_micros = allocation["parts"].pop(agent) * held
            self.users.setdefault(allocation["user"], [0, 0])[1] += slot_micros
            self.workspaces.setdefault(allocation["workspace"], [0, 0])[1] += slot_micros

    def apply(self, offset, event):
        self.log_end = offset + 1
        kind = event.WhichOneof("payload")  # None for a type this schema does not know: skipped
        # The writer-epoch fence: after a claim, events of older epochs never happened.
        if kind == "writer_epoch_claimed":
            self.newest_epoch = max(self.newest_epoch, event.writer_epoch_claimed.epoch)
            return
        if event.writer_epoch < self.newest_epoch:
            return
        time = event.time_unix_micros
        if kind == "task_submitted":
            submitted = event.task_submitted
            if submitted.task_id in self.tasks:
                return
            job = submitted.job_id or submitted.task_id
            self.tasks[submitted.task_id] = {"user": submitted.spec.user, "job": job,
                                             "exited": False, "allocation": None}
            self.job_workspaces.setdefault(job, submitted.workspace_id or UNCATEGORIZED)
        elif kind == "experiment_moved":
            moved = event.experiment_moved
            self.job_workspaces[moved.job_id] = moved.workspace_id or UNCATEGORIZED
        elif kind == "workspace_created":
            self.workspace_names[event.workspace_created.workspace_id] = \
                event.workspace_created.name
        elif kind == "workspace_updated":
            if event.workspace_updated.HasField("name"):
                self.workspace_names[event.workspace_updated.workspace_id] = \
                    event.workspace_updated.name
        elif kind == "allocation_assigned":
            assigned = event.allocation_assigned
            task = self.tasks.get(assigned.task_id)
            if task is None or task["exited"] or task["allocation"] is not None:
                return
            parts = {}
            for part in assigned.parts or [assigned]:  # one part unless a gang
                parts[part.agent_id] = parts.get(part.agent_id, 0) + len(part.slot_ids)
            task["allocation"] = {"id": assigned.allocation_id, "user": task["user"],
                                  "workspace": self.job_workspaces[task["job"]],
                                  "start": time, "parts": parts}
            self.open_allocations += 1
        elif kind == "allocation_part_exited":
            exited = event.allocation_part_exited
            task = self.tasks.get(exited.task_id)
            if (task is None or task["allocation"] is None or not exited.agent_id
                    or task["allocation"]["id"] != exited.allocation_id):
                return
            self._charge(task["allocation"], exited.agent_id, time)
        elif kind in ("allocation_released", "task_exited"):
            ended = getattr(event, kind)
            task = self.tasks.get(ended.task_id)
            if task is None or task["exited"]:
                return
            allocation = task["allocation"]
            if kind == "allocation_released" and (allocation is None
                                                  or allocation["id"] != ended.allocation_id):
                return
            if kind == "task_exited":
                task["exited"] = True
            if allocation is None:
                return
            self._charge(allocation, None, time)
            self.users.setdefault(allocation["user"], [0, 0])[0] += 1
            self.workspaces.setdefault(allocation["workspace"], [0, 0])[0] += 1
            task["allocation"] = None
            self.open_allocations -= 1

    def report(self):
        """The JSON document `cairn replay usage --format json` prints."""
        def figures(row, totals):
            row.update({"allocations": totals[0], "slotMicroseconds": totals[1],
                        "gpuHours": totals[1] / MICROS_PER_HOUR})
            return row
        return {
            "logEnd": self.log_end,
            "users": [figures({"user": user}, totals)
                      for user, totals in sorted(self.users.items())],
            "workspaces": [figures({"workspaceId": workspace,
                                    "name": self.workspace_names.get(workspace, "")}, totals)
                           for workspace, totals in sorted(self.workspaces.items())],
            "openAllocations": self.open_allocations,
        }


def print_table(report):
    last = report["logEnd"] - 1
    print(f"GPU-hours (slot-hours) of the allocations that ended in offsets 0 to "
          f"{last if last >= 0 else '- (the log is empty)'}; {report['openAllocations']} still "
          "running (not counted)\n")
    print(f"{'user':<32} {'allocations':>12}  {'gpu_hours':>12}")
    for row in report["users"]:
        print(f"{row['user']:<32} {row['allocations']:>12}  {row['gpuHours']:>12.6f}")
    print(f"\n{'workspace':<32} {'allocations':>12}  {'gpu_hours':>12}")
    for row in report["workspaces"]:
        name = f"{row['workspaceId']} {row['name']}"
        print(f"{name:<32} {row['allocations']:>12}  {row['gpuHours']:>12.6f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brokers", required=True, help="Kafka's bootstrap servers")
    parser.add_argument("--topic-prefix", default="cairn", help="reads PREFIX.events")
    parser.add_argument("--descriptor-set", required=True,
                        help="share/cairn/events.desc, or what `cairn replay schema` writes")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for the brokers before giving up")
    args = parser.parse_args()

    envelope = envelope_class(args.descriptor_set)
    ledger = UsageLedger()
    topic = args.topic_prefix + ".events"
    try:
        for offset, event in read_log(args.brokers, topic, envelope, args.timeout):
            ledger.apply(offset, event)
    except KafkaException as error:
        raise SystemExit(f"reading {topic} from {args.brokers}: {error.args[0].str()}")
    except DecodeError:
        raise SystemExit(f"{topic}: the record at offset {ledger.log_end} is not an Envelope")
    report = ledger.report()
    if args.format == "json":
        print(json.dumps(report))
    else:
        print_table(report)


if __name__ == "__main__":
    sys.exit(main())
