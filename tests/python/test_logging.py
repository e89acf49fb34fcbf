"""Messages: the `tilelang` logger (TL_LOG_LEVEL, tilelang.set_log_level) carries the compiler's, JIT's and
autotuner's messages; warnings name the user's file and line, never the package's own frames."""
import logging
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tilelang
import tilelang.language as T


@pytest.fixture
def restore_level():
    logger = logging.getLogger("tilelang")
    level = logger.level
    yield logger
    logger.setLevel(level)


def test_logger_and_set_log_level(restore_level):
    logger = restore_level
    assert tilelang.logger is logger and logger.name == "tilelang"
    tilelang.set_log_level("debug")
    assert logger.level == logging.DEBUG
    tilelang.set_log_level(logging.ERROR)
    assert logger.level == logging.ERROR
    tilelang.set_log_level("WARNING")
    assert logger.getEffectiveLevel() == logging.WARNING
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        tilelang.set_log_level("loud")


def _level_in_fresh_process(value):
    env = dict(os.environ)
    env.pop("TL_LOG_LEVEL", None)
    if value is not None:
        env["TL_LOG_LEVEL"] = value
    out = subprocess.run([sys.executable, "-c", "import tilelang; print(tilelang.logger.level)"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip()), out.stderr


def test_TL_LOG_LEVEL_sets_the_starting_level():
    assert _level_in_fresh_process(None)[0] == logging.INFO
    assert _level_in_fresh_process("DEBUG")[0] == logging.DEBUG
    assert _level_in_fresh_process("error")[0] == logging.ERROR
    assert _level_in_fresh_process("30")[0] == 30
    level, err = _level_in_fresh_process("chatty")
    assert level == logging.INFO and "TL_LOG_LEVEL=chatty is not a log level; using INFO" in err


def _tiny_factory(n=256, block=64):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1.0

    return main


def test_autotuner_messages_go_through_the_logger(restore_level, tmp_path, monkeypatch, capsys):
    """verbose=False: the tuner's messages are DEBUG records, shown when the level asks for them and
    received by a handler the user adds to the `tilelang` logger."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    keep = Keep()
    restore_level.addHandler(keep)
    try:
        def tune():
            jitted = tilelang.jit(out_idx=[1], target="cpu")(_tiny_factory)
            tuned = tilelang.autotune(configs=[{"block": 32}, {"block": 64}], warmup=1, rep=1, verbose=False,
                                      use_cache=False)(jitted)
            return tuned(256)

        tilelang.set_log_level("WARNING")
        tune()
        assert "autotune: best config" not in capsys.readouterr().err
        assert not [r for r in records if "best config" in r.getMessage()]
        tilelang.set_log_level("DEBUG")
        result = tune()
        assert "[tilelang DEBUG] autotune: best config for _tiny_factory" in capsys.readouterr().err
        (best,) = [r for r in records if "best config" in r.getMessage()]
        assert best.name == "tilelang" and best.levelno == logging.DEBUG
        assert result.config in ({"block": 32}, {"block": 64})
    finally:
        restore_level.removeHandler(keep)


def test_warnings_name_the_users_line_not_the_packages():
    """A pass-config warning raised deep in an eager call, and a @tilelang.jit option warning: both at
    this file's line, none at a frame inside the tilelang package."""
    package = os.path.dirname(tilelang.__file__)

    @tilelang.jit(target="cpu", pass_configs={tilelang.PassConfigKey.TL_EMIT_LINE_DIRECTIVES: True})
    def copy(X):
        n = T.const("n")
        X: T.Tensor((n,), T.float32)
        Y = T.empty((n,), T.float32)
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    Y[bx * 64 + i] = X[bx * 64 + i]
        return Y

    x = np.arange(100, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        y = copy(x)
    np.testing.assert_array_equal(y, x)
    unimplemented = [w for w in caught if "tl.emit_line_directives' is accepted but not implemented" in str(w.message)]
    assert unimplemented, [str(w.message) for w in caught]
    for w in unimplemented:
        assert (w.filename, w.lineno) == (__file__, line), (w.filename, w.lineno)
    assert not [w for w in caught if w.filename.startswith(package)]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        tilelang.jit(target="cpu", debug_root_path="/tmp/x")(_tiny_factory)
    (w,) = [w for w in caught if "debug_root_path" in str(w.message)]
    assert (w.filename, w.lineno) == (__file__, line)
