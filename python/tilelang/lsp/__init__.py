"""Editor support: a language server (``tilelang-lsp``, ``tilelang lsp``) that shows the compiler's errors,
warnings and decisions in the editor. ``analysis`` runs a user's file (in a worker process only),
``worker`` runs it out of process with a time limit, ``server`` speaks LSP over stdio (pygls)."""


def main(argv=None):
    """Entry point of the ``tilelang-lsp`` console script."""
    from .server import main as _main

    return _main(argv)
