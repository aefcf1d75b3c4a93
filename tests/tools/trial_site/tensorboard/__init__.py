"""A stand-in for the `tensorboard` package, for tests only: Debian has no package of it and this
machine has no Python package index. Determined's Core API (`det.core.init()`) imports
`torch.utils.tensorboard`, which needs `tensorboard` to import; what it writes is not what the
tests check, so every module, class and call here accepts anything and writes nothing.
A real cluster has the real package in the trial's environment (Determined's package depends on
it); Cairn itself never imports it.
"""

import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "2.15.0"


class _AnythingMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything


class _Anything(metaclass=_AnythingMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False


class _AnythingModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.startswith(__name__ + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _AnythingModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())
