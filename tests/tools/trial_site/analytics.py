"""Test environment only: Segment's `analytics` client (PyPI analytics-python), which Determined's
legacy harness imports, is not a Debian package. Determined sends nothing unless
DET_SEGMENT_ENABLED is "true", and Cairn's trials set it "false"; this stand-in takes the settings
the harness assigns and sends nothing.
"""

write_key = None
max_retries = 0


def track(*args, **kwargs):
    pass
