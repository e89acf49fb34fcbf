"""TileLang's code post-processing callbacks (a function that rewrites the generated CUDA / HIP / C / Metal
source before it is built). TileLang-C++ does not run user rewrites of its generated code: registering one
raises a TileLangUnsupportedError (the names exist, so programs that import them load). Device code of
your own goes in with T.import_source / T.call_extern instead."""
from ..errors import TileLangUnsupportedError


def _refuse(kind):
    raise TileLangUnsupportedError(
        f"register_{kind}_postproc: TileLang-C++ does not run user rewrites of its generated {kind.upper()} "
        "source; put your own device functions in with T.import_source(...) and call them with "
        "T.call_extern(...)")


def register_cuda_postproc(func, override=True):
    _refuse("cuda")


def register_hip_postproc(func, override=True):
    _refuse("hip")


def register_c_postproc(func, override=True):
    _refuse("c")


def register_metal_postproc(func, override=True):
    _refuse("metal")


def _decorator(kind):
    def register(func=None, override=True):
        if callable(func):
            _refuse(kind)
        return lambda f: _refuse(kind)

    register.__name__ = f"register_{kind}_postproc_callback"
    return register


register_cuda_postproc_callback = _decorator("cuda")
register_hip_postproc_callback = _decorator("hip")
register_c_postproc_callback = _decorator("c")
register_metal_postproc_callback = _decorator("metal")
