#!/usr/bin/env python3
"""Holds the house to its plan by its #include lines (docs/architecture.md, "The house, checked").

1. Top-level folders include only the folders below them (FOLDERS): no upward arrow, no cycle.
2. Inside the write side (commands/), a domain's room includes its own folder, the floor (what
   every decider takes and reads: FLOOR), and the rooms it declares (DOMAINS) -- never the
   dispatcher, the command variant or a room it has not declared.
3. The floor includes only the domains' parts of the decision state (STATE_PARTS).

Run from anywhere: `python3 ops/check-includes.py [--root DIR]`; exit 1 with one line per
breach. ctest runs it over the repository and over trees made to break it
(tests/tools/check_includes_test.py).
"""

import argparse
import pathlib
import re
import sys

DEFAULT_ROOT = pathlib.Path(__file__).resolve().parent.parent

# Each top-level folder and the folders it may include. tests/ and ops/ may include anything.
FOLDERS = {
    "base": set(),
    "events": {"base"},
    "projections": {"base", "events"},
    "commands": {"base", "events"},
    "net": {"base"},
    "replay": {"base", "events", "projections", "commands"},
    "api": {"base", "events", "projections", "commands", "net", "replay"},
    "master": {"base", "events", "projections", "commands", "net", "api"},
    "agent": {"base", "events", "net"},
    "cli": {"base", "net", "replay"},
}

# The write side's rooms and the rooms each may include (its declared hooks on them).
DOMAINS = {
    "identity": set(),
    "tenancy": {"identity"},
    "registry": {"tenancy"},
    "scheduler": set(),  # knows gangs, not their owners: scheduler/gang_hooks.h
    "templates": {"tenancy"},
    "policies": {"tenancy", "templates"},
    "tasks": {"scheduler", "tenancy", "templates", "policies"},
    "agents": {"tasks", "scheduler", "experiments"},  # a pool's defaults carry log_policies
    "experiments": {"tasks", "scheduler", "tenancy", "templates", "policies"},
    "pai": {"tasks", "scheduler", "tenancy"},
    "webhooks": {"tenancy"},
    "proto": set(),
}

# The floor every room may include: a decision, and the decision state it is taken against.
FLOOR = {"commands/decision.h", "commands/decision_state.h"}

# The decision snapshot's schema and the codec every room's part of it shares: any room may
# include it (commands/<room>/*_snapshot.cpp).
SNAPSHOT_CODEC = "proto"

# What the floor itself may include: each domain's part of the decision state.
STATE_PARTS = {
    "commands/agents/agent_records.h",
    "commands/experiments/experiment_records.h",
    "commands/identity/identity.h",
    "commands/pai/pai_records.h",
    "commands/registry/model_registry.h",
    "commands/tasks/job_ranks.h",
    "commands/tasks/task_records.h",
    "commands/tenancy/tenancy.h",
    "commands/webhooks/webhook_records.h",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = ("*.h", "*.cpp")


def room_of(path):
    """('commands', 'tasks') for commands/tasks/x.h, ('commands', None) for commands/x.h."""
    parts = path.split("/")
    if parts[0] == "commands" and len(parts) > 2:
        return parts[0], parts[1]
    return parts[0], None


def breaches(root):
    found = []
    for folder in FOLDERS:
        for pattern in SOURCES:
            for file in sorted((root / folder).rglob(pattern)):
                path = file.relative_to(root).as_posix()
                for included in INCLUDE.findall(file.read_text(encoding="utf-8", errors="replace")):
                    why = breach(path, included)
                    if why:
                        found.append(f"{path}: #include \"{included}\": {why}")
    return found


def breach(path, included):
    folder, room = room_of(path)
    target_folder = included.split("/")[0]
    if "/" not in included or target_folder not in FOLDERS:
        return None  # generated headers (events.pb.h) and third-party ones
    if target_folder != folder and target_folder not in FOLDERS[folder]:
        return f"{folder}/ may include only {sorted(FOLDERS[folder]) or 'nothing else'}"
    if folder != "commands" or target_folder != "commands":
        return None
    _, target_room = room_of(included)
    if room is None:
        if path in FLOOR and included not in FLOOR and included not in STATE_PARTS:
            return "the floor includes only the domains' parts of the decision state"
        return None
    if target_room == room or included in FLOOR or target_room == SNAPSHOT_CODEC:
        return None
    if target_room is None:
        return f"commands/{room}/ includes the floor only ({', '.join(sorted(FLOOR))})"
    if target_room not in DOMAINS:
        return f"commands/{target_room}/ is not a room of DOMAINS"
    if target_room not in DOMAINS.get(room, set()):
        return f"commands/{room}/ has not declared commands/{target_room}/ (DOMAINS)"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=DEFAULT_ROOT,
                        help="the repository to check (default: this script's)")
    root = parser.parse_args().root
    rooms = (root / "commands").iterdir() if (root / "commands").is_dir() else []
    missing = [room for room in sorted(p.name for p in rooms if p.is_dir()) if room not in DOMAINS]
    found = breaches(root) + [f"commands/{room}/: a room with no entry in DOMAINS" for room in missing]
    for line in found:
        print(line)
    if found:
        print(f"check-includes: {len(found)} include(s) break the house's plan", file=sys.stderr)
        return 1
    print("check-includes: every #include follows the house's plan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
