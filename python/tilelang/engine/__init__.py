"""tilelang.engine: TileLang's lowering entry (``tilelang.engine.lower`` / ``tilelang.lower``) and its
code post-processing callbacks (``tilelang.engine.callback``)."""
from .lower import CompiledArtifact, lower  # noqa: F401
