"""Kernels run by the interpreter, as numba's ``NUMBA_DISABLE_JIT=1`` leaves them, with the
arithmetic of their compiled form.

With the JIT disabled (numba's debugging switch, which coverage tools set too),
:func:`fasteval._jit.njit` returns the Python functions. Python's arithmetic is not
the compiled kernels' on a few edges, and fasteval's results must not change with the
switch:

* a kernel compiled with ``error_model="numpy"`` divides by zero into ``inf``/``nan``
  (``0 / 0`` is NaN: a measure of a query without relevant documents), where Python raises
  ``ZeroDivisionError``; integer ``//`` and ``%`` by zero give 0;
* numba's ``math.log(0)`` is ``-inf`` and ``math.sqrt(-1)`` NaN (C's functions), where
  Python's raise ``ValueError``;
* fixed-width integers wrap around silently; numpy warns on scalars.

So a kernel's source is rewritten once, when it is made: ``/``, ``//`` and ``%`` (also as
``/=``, ``//=``, ``%=``) become calls of helpers with numpy's semantics (only for
``error_model="numpy"``), the partial ``math`` functions become their numpy forms, and the
call runs with numpy's floating-point warnings off. A function whose source cannot be read
is run as it is.
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import textwrap
import types
from collections.abc import Callable
from typing import Any

import numpy as np


def _div(a: Any, b: Any) -> Any:
    """``a / b``; by zero as numpy divides (``inf``, ``-inf`` or ``nan``)."""
    try:
        return a / b
    except ZeroDivisionError:
        return np.float64(a) / np.float64(b)


def _floordiv(a: Any, b: Any) -> Any:
    """``a // b``; by zero as numpy divides (0 for integers)."""
    try:
        return a // b
    except ZeroDivisionError:
        return np.floor_divide(np.asarray(a), np.asarray(b))[()]


def _mod(a: Any, b: Any) -> Any:
    """``a % b``; by zero as numpy divides (0 for integers)."""
    try:
        return a % b
    except ZeroDivisionError:
        return np.remainder(np.asarray(a), np.asarray(b))[()]


def _lgamma(x: Any) -> float:
    """``math.lgamma``, ``inf`` at the poles (0, -1, ...) as C's ``lgamma``."""
    try:
        return math.lgamma(x)
    except ValueError:
        return math.inf


_BINOPS = {ast.Div: "_fasteval_div_", ast.FloorDiv: "_fasteval_floordiv_", ast.Mod: "_fasteval_mod_"}
_MATH = {"log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
         "exp": np.exp, "lgamma": _lgamma}
_HELPERS: dict[str, Any] = {"_fasteval_div_": _div, "_fasteval_floordiv_": _floordiv,
                            "_fasteval_mod_": _mod,
                            **{f"_fasteval_math_{k}_": v for k, v in _MATH.items()}}


class _Rewrite(ast.NodeTransformer):
    """Division to :data:`_BINOPS`' helpers (when ``divide``), ``math.f`` to :data:`_MATH`."""

    def __init__(self, divide: bool) -> None:
        self.divide = divide

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        name = _BINOPS.get(type(node.op)) if self.divide else None
        if name is None:
            return node
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), [node.left, node.right], []), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        name = _BINOPS.get(type(node.op)) if self.divide else None
        if name is None:
            return node
        load = _as_load(node.target)
        call = ast.Call(ast.Name(name, ast.Load()), [load, node.value], [])
        return ast.copy_location(ast.Assign([node.target], call), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "math" and node.attr in _MATH:
            return ast.copy_location(ast.Name(f"_fasteval_math_{node.attr}_", ast.Load()), node)
        return node


def _as_load(target: ast.expr) -> ast.expr:
    """A copy of an assignment target read as a value."""
    load = ast.parse(ast.unparse(target), mode="eval").body
    return ast.copy_location(load, target)


def _rewritten_code(func: Callable, divide: bool) -> types.CodeType | None:
    """The code of ``func`` rewritten by :class:`_Rewrite`, or None where its source cannot
    be read (a lambda, a function made by ``exec``)."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != func.__name__:
        return None
    fdef.decorator_list = []
    fdef = _Rewrite(divide).visit(fdef)
    free = func.__code__.co_freevars
    # a factory holding the free variables, so that the function's code reads them from cells
    body = [ast.Assign([ast.Name(v, ast.Store())], ast.Constant(None)) for v in free]
    factory = ast.FunctionDef("_fasteval_factory_", ast.arguments([], [], None, [], [], None, []),
                              [*body, fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], [], None)
    module = ast.fix_missing_locations(ast.Module([factory], []))
    ast.increment_lineno(module, func.__code__.co_firstlineno - 1)
    code = compile(module, func.__code__.co_filename, "exec")
    outer = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return next(c for c in outer.co_consts if isinstance(c, types.CodeType) and c.co_name == fdef.name)


def interpreted(func: Callable, error_model: str = "python") -> Callable:
    """``func`` as a kernel made with numba's JIT disabled runs: rewritten for the compiled
    kernel's arithmetic (see the module docstring), called with numpy's floating-point
    warnings off. The result's ``py_func`` is ``func``.

    Examples
    --------
    >>> def ratio(a, b):
    ...     return a / b
    >>> import math
    >>> math.isnan(interpreted(ratio, error_model="numpy")(0, 0))
    True
    """
    code = _rewritten_code(func, error_model == "numpy")
    run = func
    if code is not None:
        cells = dict(zip(func.__code__.co_freevars, func.__closure__ or (), strict=True))
        closure = tuple(cells[v] for v in code.co_freevars) or None
        for name, helper in _HELPERS.items():
            func.__globals__.setdefault(name, helper)
        run = types.FunctionType(code, func.__globals__, func.__name__, func.__defaults__, closure)
        run.__kwdefaults__ = func.__kwdefaults__

    @functools.wraps(func)
    def kernel(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return run(*args, **kwargs)

    kernel.py_func = func  # type: ignore[attr-defined]
    return kernel
