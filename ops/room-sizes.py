#!/usr/bin/env python3
"""The write side's rooms by size: files and lines of .h/.cpp in each folder of commands/ (the
top is everything directly in commands/), and the #includes from one room into another.

  python3 ops/room-sizes.py [REPOSITORY]   (default: this script's repository)
"""

import collections
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"(commands/[^"]+)"', re.M)


def room(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else "(top)"


def main():
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent
    lines, files, across = collections.Counter(), collections.Counter(), collections.Counter()
    for file in sorted((root / "commands").rglob("*")):
        if file.suffix not in (".h", ".cpp"):
            continue
        path = file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8", errors="replace")
        lines[room(path)] += text.count("\n")
        files[room(path)] += 1
        for included in INCLUDE.findall(text):
            if room(included) != room(path):
                across[(room(path), room(included))] += 1
    print("room | files | lines")
    for name in sorted(lines):
        print(f"{name} | {files[name]} | {lines[name]}")
    print("\nincludes from one room into another (the top's floor is decision.h, decision_state.h)")
    for (source, target), count in sorted(across.items()):
        print(f"{source} -> {target}: {count}")


if __name__ == "__main__":
    main()
