"""The layering of the Python package (issue 33): no import circles anywhere in python/tilelang, the T
namespace unchanged by the split of tilelang/language by op family, and no module of language/ that grows
back into a catch-all.

The import graph is read from the source with `ast`: every `import tilelang...` and every relative or
absolute `from ... import ...`, at module level and inside functions alike (a circle through a
function-level import is still a circle). `from pkg import name` depends on the module pkg.name when that
is a module, else on pkg itself (its __init__). Importing a.b.c is not counted as importing a.b's __init__
(that edge is Python's machinery, not the code's). The compiled extension (tilelang._ffi) is a leaf.

Before the split this test failed: the graph had the circles jit.kernel -> profiler -> profiler.supply ->
jit.kernel (and jit.kernel <-> tools.lower_trace), tilelang -> autotuner -> autotuner.tuner <->
autotuner.ray_executor -> tilelang, lsp.analysis <-> lsp.discover, and one through language, its ast /
expr / compat / parser / loop_exits / macro_expand modules, jit, jit.eager and layout (dtype_str, const,
make_view, T.const / T.empty). Run this file's graph on another tree with
`python tests/python/test_package_structure.py path/to/python/tilelang`.
"""
import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "tilelang"
EXTENSIONS = {"tilelang._ffi"}
MAX_LANGUAGE_MODULE_LINES = 450


def modules(package_dir):
    """{dotted name: (path, is_package)} of every .py file under package_dir."""
    package_dir = pathlib.Path(package_dir)
    out = {}
    for p in sorted(package_dir.rglob("*.py")):
        parts = list(p.relative_to(package_dir.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (p, is_pkg)
    return out


def import_graph(mods):
    """{module: sorted modules of the package it imports}, function-level imports included."""
    top = next(iter(mods)).split(".")[0]
    graph = {}
    for name, (path, is_pkg) in mods.items():
        pkg = name if is_pkg else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.split(".")[0] == top)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                    if source.split(".")[0] != top:
                        continue
                for a in node.names:
                    sub = f"{source}.{a.name}"
                    targets.add(sub if sub in mods or sub in EXTENSIONS else source)
        graph[name] = sorted(t for t in targets if t in mods and t != name)
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each with one circle in it."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return [(comp, _circle(graph, set(comp))) for comp in found]


def _circle(graph, comp):
    """One circle through the component, as a list of modules from its first back to it."""
    start = min(comp)
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for w in graph[path[-1]]:
            if w == start:
                return path + [start]
            if w in comp and w not in seen:
                seen.add(w)
                paths.append(path + [w])
    return [start]


def _report(found):
    return "\n".join(f"import circle: {' -> '.join(circle)}  (component: {', '.join(comp)})" for comp, circle in found)


def test_the_package_has_no_import_circles():
    found = cycles(import_graph(modules(PACKAGE)))
    assert not found, _report(found)


def test_the_graph_sees_function_level_imports():
    """The checker itself: a circle closed only inside a function body is found."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        pkg = pathlib.Path(d) / "tilelang"
        (pkg / "sub").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "sub" / "__init__.py").write_text("")
        (pkg / "sub" / "a.py").write_text("from . import b\n")
        (pkg / "sub" / "b.py").write_text("def f():\n    from .a import x\n    import tilelang.sub.c\n")
        (pkg / "sub" / "c.py").write_text("def g():\n    from ..sub import a\n")
        found = cycles(import_graph(modules(pkg)))
        assert [comp for comp, _ in found] == [["tilelang.sub.a", "tilelang.sub.b", "tilelang.sub.c"]]


def _surface():
    rows = []
    for line in (ROOT / "tests" / "python" / "data" / "t_surface.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, kind = line.split()
            rows.append((name, kind))
    return rows


def test_the_T_namespace_keeps_every_name():
    import tilelang.language as T

    rows = _surface()
    assert len(rows) > 170
    missing = [n for n, _ in rows if not hasattr(T, n)]
    assert not missing, f"names gone from the T namespace: {missing}"
    changed = [(n, k, type(getattr(T, n)).__name__) for n, k in rows if type(getattr(T, n)).__name__ != k]
    assert not changed, f"names whose object changed kind (name, was, now): {changed}"


def test_T_names_are_the_family_modules_objects():
    """The re-exports are the objects of the family modules, not copies (T.copy is copy_op.copy, ...)."""
    import tilelang.language as T
    from tilelang.language import allocate, copy_op, dtypes, gemm_op, loop, reduce_op

    assert T.copy is copy_op.copy and T.gemm is gemm_op.gemm and T.reduce_sum is reduce_op.reduce_sum
    assert T.alloc_shared is allocate.alloc_shared and T.Parallel is loop.Parallel and T.serial is loop.serial
    assert T.float16 is dtypes.float16 and T.dtype is dtypes.DType and T.half == T.float16
    assert T.bool.name == "bool" and T.dtype_str(bool) == "bool"


def test_language_modules_stay_small():
    big = {p.name: n for p in sorted((PACKAGE / "language").glob("*.py"))
           if (n := len(p.read_text().splitlines())) > MAX_LANGUAGE_MODULE_LINES}
    assert not big, f"modules of tilelang/language over {MAX_LANGUAGE_MODULE_LINES} lines (split by op family): {big}"


if __name__ == "__main__":
    found = cycles(import_graph(modules(sys.argv[1] if len(sys.argv) > 1 else PACKAGE)))
    print(_report(found) or "no import circles")
    sys.exit(1 if found else 0)
