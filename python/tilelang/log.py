"""The package's messages: the ``tilelang`` logger and warnings reported at the user's line.

TileLang's spelling: ``logging.getLogger("tilelang")``, ``tilelang.set_log_level("DEBUG")``; the starting
level comes from TL_LOG_LEVEL (a level name or number; INFO when unset). The logger has its own stderr
handler and does not propagate, so an application's root logging configuration neither doubles nor
silences it; ``set_log_level`` and the usual ``logging`` calls on the logger change it.

``warn`` reports a warning at the first frame outside this package -- the user's kernel or call -- so the
message names the user's file:line and Python shows the user's line under it, never ours.
"""
import logging
import os
import sys
import warnings

logger = logging.getLogger("tilelang")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _parse_level(level):
    if isinstance(level, int):
        return level
    text = str(level).strip()
    if text.isdigit():
        return int(text)
    value = logging.getLevelName(text.upper())
    if not isinstance(value, int):
        raise ValueError(f"unknown log level {level!r}; use DEBUG, INFO, WARNING, ERROR, CRITICAL or a number")
    return value


def set_log_level(level):
    """Sets the ``tilelang`` logger's level: a name ("DEBUG", "info", ...) or a ``logging`` number."""
    logger.setLevel(_parse_level(level))


class _StderrHandler(logging.StreamHandler):
    """Writes to the sys.stderr of the moment (a redirected or captured stderr included)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _init():
    if any(getattr(h, "_tilelang", False) for h in logger.handlers):
        return
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("[tilelang %(levelname)s] %(message)s"))
    handler._tilelang = True
    logger.addHandler(handler)
    logger.propagate = False
    env = os.environ.get("TL_LOG_LEVEL", "").strip()
    try:
        set_log_level(env or "INFO")
    except ValueError:
        set_log_level("INFO")
        logger.warning("TL_LOG_LEVEL=%s is not a log level; using INFO", env)


def _user_stacklevel():
    """warnings.warn's stacklevel, seen from warn()'s caller, of the first frame outside this package."""
    frame, level = sys._getframe(2), 2  # 1: warn itself, 2: its caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def warn(message, category=UserWarning):
    """warnings.warn at the user's frame (the nearest caller outside the tilelang package)."""
    warnings.warn(message, category, stacklevel=_user_stacklevel())


_init()
