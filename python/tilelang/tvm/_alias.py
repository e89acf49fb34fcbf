"""A bare `import tvm` where no TVM is installed: a meta-path finder placed after Python's own finders
maps `tvm` and `tvm.<sub>` to `tilelang.tvm` and its submodules. A real TVM on sys.path is always found
first and is never shadowed. Installed by `import tilelang`."""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from ..errors import TileLangUnsupportedError


class _Alias(types.ModuleType):
    """`tvm` (or `tvm.tir`): every attribute is that of the tilelang.tvm module it stands for."""

    def __init__(self, name, target):
        super().__init__(name, target.__doc__)
        object.__setattr__(self, "_target", target)
        # Every alias is a package whose submodules come through the finder (a TVM submodule not mapped
        # here gets the finder's error), never from tilelang.tvm's folder.
        self.__path__ = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(object.__getattribute__(self, "_target"), name)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_target"))


class _Loader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return _Alias(spec.name, self.target)

    def exec_module(self, module):
        pass


class TvmAliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tvm" and not fullname.startswith("tvm."):
            return None
        inner = "tilelang." + fullname
        try:
            mod = importlib.import_module(inner)
        except ModuleNotFoundError as e:
            if e.name != inner:
                raise
            raise TileLangUnsupportedError(
                f"'{fullname}' is TVM's; no TVM is installed, and tilelang.tvm maps only the TVM names TileLang "
                "programs use (docs/compatibility.md)") from None
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(mod), is_package=True)
        spec.submodule_search_locations = []
        return spec


def install():
    if not any(isinstance(f, TvmAliasFinder) for f in sys.meta_path):
        sys.meta_path.append(TvmAliasFinder())
