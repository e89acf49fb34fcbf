"""Draws the language server's inlay hints for a file the way an editor shows them (grey labels after the
code, at the positions the server sends) into a PNG, for docs/editors.md. The hints are the server's own
(tilelang.lsp.analysis.analyze, what the worker computes for textDocument/inlayHint).
Usage: python scripts/render_hints.py FILE OUT.png [--target T] [--lines A:B]"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from tilelang.lsp.analysis import analyze  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("out")
    ap.add_argument("--target", default="cuda -arch=sm_80")
    ap.add_argument("--lines", default=None, help="1-based inclusive range A:B of lines to draw")
    a = ap.parse_args()
    text = open(a.file).read()
    result = analyze(a.file, text, a.target)
    lines = text.splitlines()
    lo, hi = (1, len(lines)) if not a.lines else map(int, a.lines.split(":"))
    hints = {}
    for h in result["hints"]:
        line = h["position"]["line"] + 1 if isinstance(h["position"], dict) else h["line"]
        hints.setdefault(line, []).append(h["label"])
    rows = list(range(lo, hi + 1))
    fig = plt.figure(figsize=(15, 0.24 * len(rows) + 0.4), dpi=110)
    fig.patch.set_facecolor("#1e1e1e")
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_axis_off()
    ax.set_xlim(0, 1)
    ax.set_ylim(len(rows) + 0.5, -0.5)
    cw = 0.0052  # width of one monospace character in axis units at this figure size
    for y, n in enumerate(rows):
        code = lines[n - 1].rstrip()
        ax.text(0.005, y, f"{n:3d}", color="#858585", family="monospace", fontsize=8.5, va="center")
        ax.text(0.035, y, code, color="#d4d4d4", family="monospace", fontsize=8.5, va="center")
        if n in hints:
            ax.text(0.035 + cw * (len(code) + 2), y, "  ".join(hints[n]), color="#9a9a9a", family="monospace",
                    fontsize=8.5, va="center", style="italic",
                    bbox=dict(boxstyle="round,pad=0.15", fc="#2d2d2d", ec="none"))
    fig.savefig(a.out, facecolor=fig.get_facecolor())
    print(f"wrote {a.out}: {sum(len(v) for k, v in hints.items() if lo <= k <= hi)} hints on lines {lo}-{hi}")


if __name__ == "__main__":
    main()
