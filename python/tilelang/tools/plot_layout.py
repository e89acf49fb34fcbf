"""Plots of fragment layouts: which thread owns which element of a 2-D tile.

A layout is anything with ``shape`` (rows, cols) and ``thread_local(i, j) -> (thread, local index)`` --
the protocol the compiler's fragment layouts expose -- or a pair of integer arrays ``(thread, local)``
of the tile's shape. matplotlib is imported only when a plot is drawn, with the Agg backend.
"""
import os

import numpy as np

from ..errors import TileLangTypeError, TileLangUnsupportedError


def layout_tables(layout):
    """(thread, local) as two integer arrays of the tile's shape."""
    if isinstance(layout, (tuple, list)) and len(layout) == 2 and all(isinstance(a, np.ndarray) for a in layout):
        thread, local = (np.asarray(a) for a in layout)
        if thread.ndim != 2 or thread.shape != local.shape:
            raise TileLangTypeError(f"a layout given as arrays needs two 2-D arrays of one shape, got shapes "
                                    f"{thread.shape} and {local.shape}")
        if not (np.issubdtype(thread.dtype, np.integer) and np.issubdtype(local.dtype, np.integer)):
            raise TileLangTypeError("a layout given as arrays needs integer arrays (thread[i, j], local[i, j])")
        return thread.astype(np.int64), local.astype(np.int64)
    shape = getattr(layout, "shape", None)
    fn = getattr(layout, "thread_local", None)
    if shape is None or fn is None or len(tuple(shape)) != 2:
        raise TileLangTypeError("plot_layout expects an object with a 2-D `shape` and `thread_local(i, j) -> "
                                f"(thread, local)`, or a pair of integer arrays; got {type(layout).__name__}")
    rows, cols = (int(s) for s in shape)
    thread = np.empty((rows, cols), np.int64)
    local = np.empty((rows, cols), np.int64)
    for i in range(rows):
        for j in range(cols):
            thread[i, j], local[i, j] = (int(v) for v in fn(i, j))
    return thread, local


_FORMATS = ("pdf", "png", "svg")


def _parse_formats(formats):
    """TileLang's ``formats``: "png", "png,svg", "all" or a list of them."""
    if isinstance(formats, str):
        names = ["pdf", "png", "svg"] if formats.strip().lower() == "all" else formats.split(",")
    elif isinstance(formats, (list, tuple)):
        names = list(formats)
    else:
        raise TileLangTypeError(f"formats is a string such as 'png', 'png,svg' or 'all', or a list of them; "
                                f"got {type(formats).__name__}")
    names = [str(f).strip().lower().lstrip(".") for f in names]
    bad = [f for f in names if f not in _FORMATS]
    if bad or not names:
        raise TileLangUnsupportedError(f"plot_layout writes {', '.join(_FORMATS)} files, not {bad or formats!r}")
    return list(dict.fromkeys(names))


def plot_layout(layout, path=None, title=None, labels="auto", cell_size=None, cmap="auto", dpi=100, *,
                save_directory=None, name="layout", formats=None, colormap=None):
    """Draws the tile as a grid of cells coloured by owning thread and labelled "T<thread>:<local>".

    Two spellings: ``plot_layout(layout, "frag.svg")`` writes one file whose extension gives the format
    (.png, .svg or .pdf; SVG keeps the labels as text) and returns its path; TileLang's
    ``plot_layout(layout, save_directory="./tmp", name="layout", formats="pdf")`` writes
    <save_directory>/<name>.<format> for each of ``formats`` ("png", "png,svg", "all" or a list) and
    returns the list of paths. A ``path`` without an extension is taken as the directory, as TileLang's
    second positional argument is. ``colormap`` is TileLang's name for ``cmap``.
    ``labels``: True, False, or "auto" (only when a cell is wide enough to read).
    """
    if colormap is not None:
        cmap = colormap
    ext = os.path.splitext(str(path))[1].lower() if path is not None else ""
    single = path is not None and save_directory is None and bool(ext)
    if single:
        if ext.lstrip(".") not in _FORMATS:
            raise TileLangUnsupportedError(f"plot_layout writes .png, .svg or .pdf files, not '{ext}'")
        if formats is not None:
            raise TileLangTypeError("plot_layout: give a file path, or save_directory/name/formats, not both")
        paths = [str(path)]
    else:
        if path is not None and save_directory is not None:
            raise TileLangTypeError("plot_layout: give a file path, or save_directory/name/formats, not both")
        directory = str(save_directory if save_directory is not None else path if path is not None else "./tmp")
        os.makedirs(directory, exist_ok=True)
        paths = [os.path.join(directory, f"{name}.{f}") for f in _parse_formats("pdf" if formats is None else formats)]
    thread, local = layout_tables(layout)
    rows, cols = thread.shape
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle
    except ImportError:
        raise TileLangUnsupportedError("plot_layout needs matplotlib: pip install matplotlib") from None

    if cell_size is None:  # inches per cell: readable labels for small tiles, a bounded figure for big ones
        cell_size = min(0.7, max(0.08, 24.0 / max(rows, cols)))
    if labels == "auto":
        labels = cell_size >= 0.35
    nthreads = int(thread.max()) + 1 if thread.size else 1
    if cmap == "auto":  # distinct colours for a few threads, a smooth ramp for many
        cmap = "tab20" if nthreads <= 20 else "turbo"
    colours = matplotlib.colormaps[cmap]
    ncol = colours.N

    with matplotlib.rc_context({"svg.fonttype": "none"}):  # SVG text stays text (searchable labels)
        # A Figure with an Agg canvas, not pyplot: no global backend switch, no window, no leaked figures.
        fig = Figure(figsize=(cols * cell_size + 1.0, rows * cell_size + 1.0))
        FigureCanvasAgg(fig)
        ax = fig.subplots()
        for i in range(rows):
            for j in range(cols):
                t = int(thread[i, j])
                c = colours(t % ncol) if ncol < 256 else colours(t / max(nthreads - 1, 1))
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor=c, edgecolor="black", linewidth=0.4))
                if labels:
                    ax.text(j + 0.5, i + 0.5, f"T{t}:{int(local[i, j])}", ha="center", va="center",
                            fontsize=max(4.0, min(8.0, cell_size * 11)))
        ax.set_xlim(0, cols)
        ax.set_ylim(rows, 0)  # row 0 at the top, as the tile is indexed
        ax.set_aspect("equal")
        step_r, step_c = max(1, rows // 16), max(1, cols // 16)
        ax.set_xticks([j + 0.5 for j in range(0, cols, step_c)], [str(j) for j in range(0, cols, step_c)])
        ax.set_yticks([i + 0.5 for i in range(0, rows, step_r)], [str(i) for i in range(0, rows, step_r)])
        ax.xaxis.tick_top()
        ax.tick_params(length=0, labelsize=7)
        ax.set_title(title or f"{rows}x{cols} tile, {nthreads} threads", fontsize=9)
        fig.tight_layout()
        for p in paths:
            fig.savefig(p, dpi=dpi)
    return paths[0] if single else paths
