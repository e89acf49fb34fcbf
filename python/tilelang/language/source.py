"""The source of a DSL function: its file, first line, indentation and AST (registered for error carets),
with chained assignments split as Python runs them."""
import ast
import inspect
import linecache
import textwrap

from .. import _ffi
from ..errors import TileLangSyntaxError


def _find_function(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def function_source(fn, what):
    """(filename, first line, indent, the function's AST) of a Python function, with the file's text
    registered for error carets. `what` names it in errors ("'f'", "macro 'm'")."""
    try:
        filename = inspect.getsourcefile(fn) or "<unknown>"
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise TileLangSyntaxError(f"cannot read the source of {what}: {e}") from None
    indent = len(lines[0]) - len(lines[0].lstrip())
    _ffi.register_source(filename, "".join(linecache.getlines(filename)) or "".join(lines))
    fdef = _find_function(_split_chained_assignments(ast.parse(textwrap.dedent("".join(lines)))), fn.__name__)
    return filename, start, indent, fdef


def _split_chained_assignments(tree):
    """`a = b = v` as Python runs it: v evaluated once into a hidden name, then assigned to each target
    from left to right (`BK = BV = block_T`, `x = y = A[i] * 2`)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list) or not any(isinstance(s, ast.Assign) and len(s.targets) > 1 for s in body):
                continue
            out = []
            for st in body:
                if not (isinstance(st, ast.Assign) and len(st.targets) > 1):
                    out.append(st)
                    continue
                tmp = f"_tl_chain_{st.lineno}_{st.col_offset}"
                out.append(ast.copy_location(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=st.value), st))
                for t in st.targets:
                    name = ast.copy_location(ast.Name(tmp, ast.Load()), st)
                    out.append(ast.copy_location(ast.Assign(targets=[t], value=name), st))
            setattr(node, field, out)
    return tree
