"""A stand-in for torch, only so that TileLang's compiler (which imports torch at start-up) loads on a machine
without it. benchmarks/tilelang_sass/zoo_sass.py compiles with it; nothing here runs a kernel."""
import sys
import types as _types

__version__ = "2.5.0"


class _Any:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Any()

    def __getattr__(self, name):
        return _Any()

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __mro_entries__(self, bases):
        return (object,)


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


for _n in ("float16 float32 float64 bfloat16 int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool float8_e4m3fn "
           "float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn_x2 half float double int long "
           "short complex64 complex128").split():
    globals()[_n] = dtype(_n)


class Tensor:
    pass


class device:
    def __init__(self, *args, **kwargs):
        pass


class Size(tuple):
    pass


class Generator:
    pass


def __getattr__(name):
    return _Any()


class _Module(_types.ModuleType):
    def __getattr__(self, name):
        return _Any()


for _m in ("cuda utils library _C nn backends version distributed fx _dynamo testing autograd types overrides _ops "
           "jit mps amp compiler").split():
    sys.modules["torch." + _m] = globals()[_m] = _Module("torch." + _m)
for _m in ("utils.dlpack", "utils.cpp_extension", "utils._pytree", "nn.functional", "backends.cuda", "cuda.amp"):
    parent, leaf = _m.split(".")
    sys.modules["torch." + _m] = _Module("torch." + _m)
    setattr(sys.modules["torch." + parent], leaf, sys.modules["torch." + _m])
sys.modules["torch.version"].cuda = "13.0"
sys.modules["torch.version"].hip = None
sys.modules["torch.cuda"].is_available = lambda: False
sys.modules["torch.cuda"].device_count = lambda: 0
