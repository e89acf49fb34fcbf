"""Which `T.*` names TileLang's example programs use, and which of them this compiler has.

Usage: python scripts/tilelang_census.py /path/to/tilelang-checkout [--markdown]

Scans `examples/**/*.py` of a TileLang checkout (fetch tile-ai/tilelang into a scratch folder; nothing of
it is copied here) for `T.<name>` (not `x.T.<name>`), counts the files and uses of each name, and asks
this package's `tilelang.language` for it: a name counts as present when the attribute exists and is implemented.
Names we do not implement raise TileLangUnsupportedError, from the attribute lookup or, for the few that must
exist as attributes (a dtype, a constructor), when used; those are marked `_tl_unsupported` and counted as
missing ("refused") too. Prints the share of names and of uses present, then the missing names by the number of
files that use them."""
import argparse
import collections
import glob
import os
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilelang_root")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.tilelang_root, "examples", "**", "*.py"), recursive=True))
    uses, nfiles = collections.Counter(), collections.Counter()
    for f in files:
        with open(f, errors="ignore") as fh:
            src = fh.read()
        if "tilelang" not in src:
            continue
        names = re.findall(r"(?<![\w.])T\.([A-Za-z_]\w*)", src)
        uses.update(names)
        nfiles.update(set(names))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import tilelang.language as T

    if not nfiles:
        sys.exit(f"no T.* names in {args.tilelang_root}/examples (is it a TileLang checkout?)")
    present, missing = [], []
    for n in sorted(nfiles, key=lambda n: (-nfiles[n], n)):
        try:
            obj = getattr(T, n)
        except Exception:  # noqa: BLE001 (TileLangUnsupportedError, AttributeError)
            missing.append(n)
            continue
        (missing if getattr(obj, "_tl_unsupported", False) else present).append(n)
    pu, mu = sum(uses[n] for n in present), sum(uses[n] for n in missing)
    head = (f"{len(present)} of {len(nfiles)} T.* names present ({100 * len(present) / len(nfiles):.1f}%), "
            f"{pu} of {pu + mu} uses ({100 * pu / (pu + mu):.1f}%), over {len(files)} example files")
    if not args.markdown:
        print(head)
        for n in missing:
            print(f"  missing T.{n}: {nfiles[n]} files, {uses[n]} uses")
        return
    print(head + ".\n")
    print("| missing name | files | uses |\n|---|---:|---:|")
    for n in missing:
        print(f"| `T.{n}` | {nfiles[n]} | {uses[n]} |")
    print("\nPresent: " + ", ".join(f"`T.{n}`" for n in present) + ".")


if __name__ == "__main__":
    main()
