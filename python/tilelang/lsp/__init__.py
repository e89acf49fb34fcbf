"""Editor support: a language server (``tilelang-lsp``, ``tilelang lsp``) that shows the compiler's errors,
warnings and decisions in the editor. ``analysis`` runs a user's file (in a worker process only),
``worker`` runs it out of process with a time limit, ``server`` speaks LSP over stdio (pygls)."""


def main(argv=None):
    """Entry point of the ``tilelang-lsp`` console script."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"tilelang-lsp needs pygls and lsprotocol ({e}); install them with "
                         "`pip install 'pygls>=2.0' lsprotocol` (or the package's [lsp] extra)") from None
    from .server import main as _main

    return _main(argv)
