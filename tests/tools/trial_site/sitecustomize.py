"""Test environment only: mends Debian 12's python3-torch (1.13) under its Python 3.11.

torchrun (`python3 -m torch.distributed.run`, which Determined's torch_distributed launcher runs)
reads its --redirects and --tee options with Std.from_str, which looks the value up by iterating
an IntFlag; since Python 3.11 that iteration skips the zero member NONE, so the default "0" becomes
None and torchrun stops with "AttributeError: 'NoneType' object has no attribute 'get'". A trial
image with a torch built for its Python has no such problem; this file is on the tests' trial
PYTHONPATH only, and changes nothing until torch's module is imported.
"""

import importlib.abc
import importlib.util
import re
import sys

_TARGET = "torch.distributed.elastic.multiprocessing.api"


def _mend(module):
    std = module.Std

    def from_str(cls, vm):
        if re.fullmatch(r"\d", vm):
            return cls(int(vm))
        if re.fullmatch(r"(\d:\d,)*\d:\d", vm):
            return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
        raise ValueError(f"{vm} is not a number or a mapping like 0:1,1:2")

    std.from_str = classmethod(from_str)


class _MendOnImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _mend(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _MendOnImport())
