"""Python kernel (TileLang style) -> Tile IR text, by reading the function's AST.

The body is never executed.  Python values the body refers to (closure variables, globals, the factory's
arguments) are constants: shapes, tile sizes, dtypes and flags specialise the kernel, and expressions built
only from constants are folded here.  Everything else becomes Tile IR, statement by statement, with a line map
so that the library's diagnostics point at the Python source (file:line:col).
"""
import ast
import builtins
import inspect
import math
import re
import textwrap

from . import language as T
from .core import CompileError

# Tile IR words a Python name may not use (keywords, dtypes, functions, built-in indices).
_RESERVED = set("""kernel grid threads shared fragment local let copy gemm clear fill reduce_sum reduce_max
reduce_min reduce_abssum reduce_absmax cumsum atomic_add barrier parallel in serial unroll pipelined stages if else
true false inf nan bool i8 u8 i16 i32 u32 i64 f16 bf16 f32 f64 fp8e4m3 fp8e5m2 fp8e4m3fnuz fp8e5m2fnuz min max abs
exp exp2 log log2 sqrt rsqrt tanh select ceildiv floor ceil round sin cos erf sigmoid pow fmod clamp if_then_else
step bx by bz tx ty tz var view break shfl_xor shfl_down shfl_up shfl_idx reinterpret i4 u4 atomic_max
atomic_min""".split())

_UNARY = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt", "rsqrt": "rsqrt",
          "tanh": "tanh", "abs": "abs", "floor": "floor", "ceil": "ceil", "round": "round", "sin": "sin",
          "cos": "cos", "erf": "erf", "sigmoid": "sigmoid"}
_NARY = {"pow": 2, "fmod": 2, "clamp": 3}
_SHFL = {"shfl_xor": "shfl_xor", "shfl_down": "shfl_down", "shfl_up": "shfl_up", "shfl_sync": "shfl_idx",
         "shfl_idx": "shfl_idx"}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_MATH_CONST = {math.sqrt, math.exp, math.log, math.log2, math.exp2 if hasattr(math, "exp2") else math.exp,
               math.ceil, math.floor, math.pow, math.tanh, builtins.int, builtins.float, builtins.min, builtins.max,
               builtins.abs, builtins.round, builtins.bool}


_MATH_UNARY = {builtins.abs: "abs", math.exp: "exp", math.sqrt: "sqrt", math.log: "log", math.log2: "log2",
               math.tanh: "tanh", math.floor: "floor", math.ceil: "ceil", builtins.round: "round", math.sin: "sin",
               math.cos: "cos", math.erf: "erf"}


class _NotConst(Exception):
    pass


class Buf:
    __slots__ = ("name", "scope", "dtype", "shape", "is_var")

    def __init__(self, name, scope, dtype, shape, is_var=False):
        self.name, self.scope, self.dtype, self.shape, self.is_var = name, scope, dtype, shape, is_var


class _Fail(Exception):
    def __init__(self, node, msg):
        super().__init__(msg)
        self.node, self.msg = node, msg


def _prim(obj):
    return getattr(obj, "_tileasm_prim", None)


class Translation:
    """The result: Tile IR text, the kernel's parameter list, and the line map for diagnostics."""

    def __init__(self, text, name, params, symbols, line_map, filename, source_lines, first_line):
        self.text, self.name, self.params, self.symbols = text, name, params, symbols
        self._map, self.filename = line_map, filename
        self._src, self._first = source_lines, first_line

    def map_diagnostics(self, diags):
        """Rewrites "<name>.tile:L:C: error: ..." into the Python file's position of that statement."""
        out = []
        pat = re.compile(r"^(.*?\.tile):(\d+):(\d+): (error|warning|note): (.*)$")
        for line in diags.splitlines():
            m = pat.match(line)
            if m and m.group(1) == self.name + ".tile":
                ir_line = int(m.group(2))
                pyl, pyc = self._map[ir_line - 1] if 0 < ir_line <= len(self._map) else (self._first, 0)
                out.append(f"{self.filename}:{pyl}:{pyc + 1}: {m.group(4)}: {m.group(5)}")
                src = self._src.get(pyl)
                if src is not None:
                    out.append("    " + src.rstrip())
                    out.append("    " + " " * pyc + "^")
                out.append(f"  (Tile IR line {ir_line}: {self.text.splitlines()[ir_line - 1].strip()})")
            elif out and (line.startswith(" ") or not line):
                continue  # the IR source line and caret: replaced by the Python ones above
            else:
                out.append(line)
        return "\n".join(out) + "\n"


def translate(fn, consts=None):
    """Translates the Python kernel function fn.  consts: extra name -> value bindings (e.g. T.dynamic
    symbols specialised for a call).  Returns a Translation; raises CompileError at the Python position."""
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<python>"
    except (OSError, TypeError) as e:
        raise CompileError(f"<python>: error: cannot read the source of {getattr(fn, '__name__', fn)}: {e}\n")
    src = textwrap.dedent("".join(lines))
    # Columns in the dedented text + indent = columns in the file.
    indent = (len(lines[0]) - len(lines[0].lstrip())) - (len(src) - len(src.lstrip(" \t")))
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise CompileError(f"{filename}:{first}:1: error: expected a function definition\n")
    env = dict(builtins.__dict__)
    env.update(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    if consts:
        env.update(consts)
    src_lines = {first + i: l for i, l in enumerate(lines)}
    tr = _Translator(fn, fdef, env, filename, first - 1, indent)
    try:
        text = tr.run()
    except _Fail as f:
        ln = getattr(f.node, "lineno", 1) + first - 1
        col = getattr(f.node, "col_offset", 0) + indent
        s = src_lines.get(ln, "")
        raise CompileError(f"{filename}:{ln}:{col + 1}: error: {f.msg}\n    {s.rstrip()}\n    {' ' * col}^\n") from None
    return Translation(text, tr.kname, tr.params, tr.symbols, tr.line_map, filename, src_lines, first)


class _Translator:
    def __init__(self, fn, fdef, env, filename, line0, col0):
        self.fn, self.fdef, self.env = fn, fdef, env
        self.line0, self.col0 = line0, col0
        self.out = []          # Tile IR lines
        self.line_map = []     # (python line, python col) per IR line
        self.depth = 0
        self.scopes = [{}]     # name -> ("buf", Buf) | ("var", irname) ; innermost last
        self.used = set()      # IR names in use
        self.kname = fdef.name  # kernel names may be Tile IR words (kernel gemm(...))
        self.params = []       # (python name, TensorType | dtype)
        self.symbols = []      # Symbol names (runtime shape symbols)
        self.kernel_seen = False

    # ---- helpers -------------------------------------------------------------------------------------
    def fail(self, node, msg):
        raise _Fail(node, msg)

    def emit(self, node, text):
        self.out.append("  " * self.depth + text)
        self.line_map.append((getattr(node, "lineno", 1) + self.line0, getattr(node, "col_offset", 0) + self.col0))

    def _irname(self, name, fresh=True):
        base = name if name not in _RESERVED else name + "_"
        n, i = base, 1
        while fresh and n in self.used:
            n, i = f"{base}_{i}", i + 1
        self.used.add(n)
        return n

    def lookup(self, name):
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def bind(self, name, entry):
        self.scopes[-1][name] = entry

    def resolve(self, node):
        """The Python object a Name/Attribute chain refers to (for T.xxx and constants), or raise _NotConst."""
        if isinstance(node, ast.Name):
            if self.lookup(node.id) is not None:
                raise _NotConst()
            if node.id in self.env:
                return self.env[node.id]
            raise _NotConst()
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            try:
                return getattr(base, node.attr)
            except AttributeError:
                raise _NotConst()
        raise _NotConst()

    def callee(self, node):
        try:
            return self.resolve(node.func)
        except _NotConst:
            return None

    def const(self, node):
        """Python value of a constant expression (closure/global values, literals, folding), or _NotConst."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.Name, ast.Attribute)):
            v = self.resolve(node)
            if isinstance(v, (int, float, str, bool, tuple, T.Symbol)) or v is None:
                return v
            raise _NotConst()
        if isinstance(node, ast.UnaryOp):
            v = self.const(node.operand)
            return {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Not: lambda x: not x,
                    ast.Invert: lambda x: ~x}[type(node.op)](v) if not isinstance(v, T.Symbol) else self._nc()
        if isinstance(node, ast.BinOp):
            a, b = self.const(node.left), self.const(node.right)
            if isinstance(a, T.Symbol) or isinstance(b, T.Symbol):
                raise _NotConst()
            ops = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
                   ast.Div: lambda x, y: x / y, ast.FloorDiv: lambda x, y: x // y, ast.Mod: lambda x, y: x % y,
                   ast.Pow: lambda x, y: x ** y, ast.BitAnd: lambda x, y: x & y, ast.BitOr: lambda x, y: x | y,
                   ast.BitXor: lambda x, y: x ^ y, ast.LShift: lambda x, y: x << y, ast.RShift: lambda x, y: x >> y}
            if type(node.op) not in ops:
                raise _NotConst()
            return ops[type(node.op)](a, b)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a, b = self.const(node.left), self.const(node.comparators[0])
            ops = {ast.Eq: a == b, ast.NotEq: a != b, ast.Lt: None, ast.Is: a is b, ast.IsNot: a is not b}
            if type(node.ops[0]) in (ast.Lt, ast.LtE, ast.Gt, ast.GtE):
                return {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b}[type(node.ops[0])]
            if type(node.ops[0]) in ops:
                return ops[type(node.ops[0])]
            raise _NotConst()
        if isinstance(node, ast.BoolOp):
            vals = [self.const(v) for v in node.values]
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.IfExp):
            return self.const(node.body) if self.const(node.test) else self.const(node.orelse)
        if isinstance(node, ast.Tuple):
            return tuple(self.const(e) for e in node.elts)
        if isinstance(node, ast.Call) and not node.keywords:
            f = self.callee(node)
            if f is T.ceildiv:
                a, b = (self.const(x) for x in node.args)
                if isinstance(a, int) and isinstance(b, int):
                    return -(-a // b)
                raise _NotConst()
            if f in _MATH_CONST or (isinstance(f, T.dtype)):
                args = [self.const(x) for x in node.args]
                if any(isinstance(a, T.Symbol) for a in args):
                    raise _NotConst()
                if isinstance(f, T.dtype):
                    raise _NotConst()
                return f(*args)
        raise _NotConst()

    def _nc(self):
        raise _NotConst()

    def try_const(self, node):
        try:
            return True, self.const(node)
        except _NotConst:
            return False, None
        except Exception as e:  # e.g. a division by zero while folding
            self.fail(node, f"cannot evaluate this constant expression: {e}")

    # ---- expressions ---------------------------------------------------------------------------------
    def literal(self, node, v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v) if v >= 0 else f"({v})"
        if isinstance(v, float):
            if math.isnan(v):
                return "nan"
            if math.isinf(v):
                return "inf" if v > 0 else "(-inf)"
            r = repr(v)
            if "e" not in r and "." not in r:
                r += ".0"
            return r if v >= 0 else f"({r})"
        if isinstance(v, T.Symbol):
            return v.name
        self.fail(node, f"a {type(v).__name__} value ({v!r}) cannot be used in a kernel expression")

    def expr(self, node):
        ok, v = self.try_const(node)
        if ok:
            return self.literal(node, v)
        if isinstance(node, ast.Name):
            e = self.lookup(node.id)
            if e is None:
                self.fail(node, f"name '{node.id}' is not defined in this kernel")
            if e[0] == "buf":
                if e[1].is_var:
                    return f"{e[1].name}[0]"
                self.fail(node, f"'{node.id}' is a buffer; index it (e.g. {node.id}[i]) or pass it to a T. primitive")
            return e[1]
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                ok, p = self.try_const(node.right)
                if ok and isinstance(p, int) and 1 <= p <= 4:
                    x = self.expr(node.left)
                    return "(" + " * ".join([x] * p) + ")"
                return f"pow({self.expr(node.left)}, {self.expr(node.right)})"
            op = _BINOPS.get(type(node.op))
            if op is None:
                self.fail(node, f"operator {type(node.op).__name__} is not supported in tileasm kernels yet")
            return f"({self.expr(node.left)} {op} {self.expr(node.right)})"
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return f"(-{self.expr(node.operand)})"
            if isinstance(node.op, ast.Not):
                return f"(!{self.expr(node.operand)})"
            if isinstance(node.op, ast.UAdd):
                return self.expr(node.operand)
            return f"(~{self.expr(node.operand)})"
        if isinstance(node, ast.Compare):
            parts, left = [], node.left
            for op, right in zip(node.ops, node.comparators):
                o = _CMPOPS.get(type(op))
                if o is None:
                    self.fail(node, f"comparison {type(op).__name__} is not supported in kernels")
                parts.append(f"({self.expr(left)} {o} {self.expr(right)})")
                left = right
            return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"
        if isinstance(node, ast.BoolOp):
            o = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + o.join(self.expr(v) for v in node.values) + ")"
        if isinstance(node, ast.IfExp):
            return f"select({self.expr(node.test)}, {self.expr(node.body)}, {self.expr(node.orelse)})"
        if isinstance(node, ast.Subscript):
            return self.element(node)
        if isinstance(node, ast.Call):
            return self.call_expr(node)
        self.fail(node, f"{type(node).__name__} expressions are not supported in tileasm kernels")

    def element(self, sub):
        """B[i, j] as an element (load/store) or a region's offsets (copy): one index per dimension."""
        b = self.buffer(sub.value)
        idx = self.indices(sub)
        if len(idx) != len(b.shape):
            self.fail(sub, f"'{b.name}' has {len(b.shape)} dimensions; {len(idx)} indices given")
        return f"{b.name}[{', '.join(idx)}]"

    def indices(self, sub):
        s = sub.slice
        if isinstance(s, ast.Index):  # Python 3.8
            s = s.value
        elts = s.elts if isinstance(s, ast.Tuple) else [s]
        out = []
        for e in elts:
            if isinstance(e, ast.Slice):
                if e.step is not None:
                    self.fail(e, "slices with a step are not supported")
                out.append(self.expr(e.lower) if e.lower is not None else "0")
            else:
                out.append(self.expr(e))
        return out

    def call_expr(self, node):
        f = self.callee(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "astype" and f is None:
            if len(node.args) != 1:
                self.fail(node, "astype takes one dtype")
            return f"{self.dtype_of(node.args[0])}({self.expr(node.func.value)})"
        p = _prim(f)
        args = node.args
        if isinstance(f, T.dtype):
            if len(args) != 1:
                self.fail(node, f"the cast {f}(...) takes one value")
            return f"{T.ir_dtype(f)}({self.expr(args[0])})"
        if p in _NARY:
            if len(args) != _NARY[p]:
                self.fail(node, f"T.{p} takes {_NARY[p]} arguments")
            return f"{p}({', '.join(self.expr(a) for a in args)})"
        if p in _UNARY or f in _MATH_UNARY:
            name = p or _MATH_UNARY[f]
            if len(args) != 1:
                self.fail(node, f"T.{name} takes one argument")
            return f"{_UNARY[name]}({self.expr(args[0])})"
        if p in ("max", "min") or f in (builtins.max, builtins.min):
            name = p or f.__name__
            if len(args) < 2:
                self.fail(node, f"{name} takes two or more arguments")
            e = self.expr(args[0])
            for a in args[1:]:
                e = f"{name}({e}, {self.expr(a)})"
            return e
        if p == "if_then_else":  # lazy, as TileLang's: a guarded load may be a branch
            if len(args) != 3:
                self.fail(node, "T.if_then_else takes (cond, then, else)")
            # a branch that reads memory needs the lazy form; otherwise select (no branch, same value)
            lazy = any(isinstance(n, ast.Subscript) for a in args[1:] for n in ast.walk(a))
            return f"{'if_then_else' if lazy else 'select'}({', '.join(self.expr(a) for a in args)})"
        if p in _SHFL:  # warp shuffles (per-thread code): (value, lane mask / offset / lane)
            a = args[1:] if p == "shfl_sync" and len(args) == 3 else args  # shfl_sync(mask, value, lane)
            if len(a) != 2:
                self.fail(node, f"T.{p} takes (value, {'lane' if p == 'shfl_sync' else 'offset'})")
            return f"{_SHFL[p]}({self.expr(a[0])}, {self.expr(a[1])})"
        if p == "reinterpret":
            if len(args) != 2:
                self.fail(node, "T.reinterpret takes (dtype, value)")
            return f"reinterpret({self.dtype_of(args[0])}, {self.expr(args[1])})"
        if f is T.ceildiv:
            if len(args) != 2:
                self.fail(node, "T.ceildiv takes two arguments")
            return f"ceildiv({self.expr(args[0])}, {self.expr(args[1])})"
        if p == "infinity":
            return "inf"
        if p == "cast":
            if len(args) != 2:
                self.fail(node, "T.cast takes (value, dtype)")
            return f"{self.dtype_of(args[1])}({self.expr(args[0])})"
        if p == "get_thread_binding":  # threadIdx.x/y/z: tx, ty, tz (per-thread code, docs/tile-ir.md)
            ok, d = self.try_const(args[0]) if args else (True, 0)
            if not ok or d not in (0, 1, 2):
                self.fail(node, "T.get_thread_binding takes a constant dimension 0, 1 or 2")
            return ("tx", "ty", "tz")[d]
        name = ast.unparse(node.func) if hasattr(ast, "unparse") else "this function"
        if p:
            self.fail(node, f"T.{p} is not an expression (or is not supported by tileasm yet)")
        self.fail(node, f"calls to {name} are not supported in tileasm kernels (only T. primitives and constant "
                        f"math on Python values)")

    def dtype_of(self, node):
        ok, v = self.try_const(node)
        if not ok or not isinstance(v, str):
            self.fail(node, "expected a dtype (e.g. T.float32 or \"float16\")")
        try:
            return T.ir_dtype(v)
        except ValueError as e:
            self.fail(node, str(e))

    def buffer(self, node):
        if isinstance(node, ast.Name):
            e = self.lookup(node.id)
            if e and e[0] == "buf":
                return e[1]
            self.fail(node, f"'{node.id}' is not a buffer (a tensor parameter or a T.alloc_* result)")
        self.fail(node, "expected a buffer name")

    def region(self, node):
        """copy/atomic_add operand: a whole buffer, or a buffer at offsets (index or slice starts)."""
        if isinstance(node, ast.Name):
            return self.buffer(node).name
        if isinstance(node, ast.Subscript):
            return self.element(node)
        self.fail(node, "expected a buffer or a buffer region (B or B[i, j])")

    def shape(self, node):
        ok, v = self.try_const(node)
        if ok and isinstance(v, int) and not isinstance(v, bool):
            v = (v,)
        if not ok or not isinstance(v, tuple) or not all(isinstance(d, int) for d in v):
            self.fail(node, "a buffer shape must be a tuple of constant integers")
        return v

    # ---- kernel --------------------------------------------------------------------------------------
    def run(self):
        fdef = self.fdef
        ann = dict(getattr(self.fn, "__annotations__", {}))
        header = []
        syms = []
        for a in fdef.args.args:
            t = ann.get(a.arg)
            if isinstance(t, str) and not isinstance(t, T.dtype) and t not in T.IR_DTYPES:
                # a string annotation (from __future__ import annotations): evaluate it
                try:
                    t = eval(t, self.env)
                except Exception as e:
                    self.fail(a, f"cannot evaluate the annotation of '{a.arg}': {e}")
            irn = self._irname(a.arg)
            if isinstance(t, T.TensorType):
                dims = []
                for d in t.shape:
                    if isinstance(d, T.Symbol):
                        sn = d.name
                        if sn in _RESERVED:
                            self.fail(a, f"shape symbol name '{sn}' is a Tile IR keyword; pick another")
                        if sn not in syms:
                            syms.append(sn)
                        dims.append(sn)
                    else:
                        dims.append(str(d))
                try:
                    dt = T.ir_dtype(t.dtype)
                except ValueError as e:
                    self.fail(a, str(e))
                header.append(f"{irn}: {dt}[{', '.join(dims)}]")
                self.bind(a.arg, ("buf", Buf(irn, "global", dt, t.shape)))
            elif isinstance(t, str):
                try:
                    dt = T.ir_dtype(t)
                except ValueError as e:
                    self.fail(a, str(e))
                header.append(f"{irn}: {dt}")
                self.bind(a.arg, ("var", irn))
            else:
                self.fail(a, f"parameter '{a.arg}' needs an annotation: T.Tensor((dims...), dtype) or a scalar dtype "
                             f"such as T.float32")
            self.params.append((a.arg, t))
        for s in syms:
            if s in self.used:
                self.fail(fdef, f"shape symbol '{s}' has the name of a parameter")
            self.used.add(s)
        self.symbols = syms
        self.header = header
        body = [s for s in fdef.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        for st in body:
            if isinstance(st, ast.With):
                self.kernel_with(st)
            elif isinstance(st, ast.Assign) and self.try_const(st.value)[0] and all(
                    isinstance(t, ast.Name) for t in st.targets):
                for t in st.targets:
                    self.env[t.id] = self.const(st.value)
            elif isinstance(st, ast.Pass) or (isinstance(st, ast.Return) and st.value is None):
                continue
            else:
                self.fail(st, "a kernel function's body is `with T.Kernel(...) as ...:` (and constant assignments)")
        if not self.kernel_seen:
            self.fail(fdef, "the kernel has no `with T.Kernel(...)` block")
        return "\n".join(self.out) + "\n"

    def kernel_with(self, st):
        if len(st.items) != 1 or not isinstance(st.items[0].context_expr, ast.Call) or \
                _prim(self.callee(st.items[0].context_expr)) != "Kernel":
            self.fail(st, "expected `with T.Kernel(grid..., threads=N) as (bx, by):`")
        if self.kernel_seen:
            self.fail(st, "one T.Kernel per function")
        self.kernel_seen = True
        call = st.items[0].context_expr
        threads = "128"
        for kw in call.keywords:
            if kw.arg == "threads":  # an int, or (x, y[, z]) with x fastest (TileLang's 2-D blocks)
                ok, t = self.try_const(kw.value)
                t = tuple(t) if isinstance(t, (tuple, list)) else (t,)
                if not ok or not 1 <= len(t) <= 3 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                               for x in t):
                    self.fail(kw.value, "threads= must be a constant integer or a tuple of 1 to 3 of them")
                threads = ", ".join(map(str, t))
            elif kw.arg in ("prelude", "is_cpu"):
                self.fail(kw, f"T.Kernel({kw.arg}=...) is not supported by tileasm")
        if not 1 <= len(call.args) <= 3:
            self.fail(call, "T.Kernel takes 1 to 3 grid sizes")
        grid = [self.expr(a) for a in call.args]
        names = []
        v = st.items[0].optional_vars
        if isinstance(v, ast.Name):
            names = [v.id]
        elif isinstance(v, (ast.Tuple, ast.List)):
            names = [e.id for e in v.elts if isinstance(e, ast.Name)]
        self.scopes.append({})
        for n, b in zip(names, ("bx", "by", "bz")):
            self.bind(n, ("var", b))
        self.emit(st, f"kernel {self.kname}({', '.join(self.header)})")
        self.emit(call, f"    grid({', '.join(grid)}) threads({threads}) {{")
        self.depth += 1
        self.block(st.body)
        self.depth -= 1
        self.emit(st, "}")
        self.scopes.pop()

    def block(self, stmts):
        self.scopes.append({})
        for s in stmts:
            self.stmt(s)
        self.scopes.pop()

    # ---- statements ----------------------------------------------------------------------------------
    def stmt(self, st):
        if isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant):
                return  # a docstring or a bare constant
            if isinstance(st.value, ast.Call):
                return self.call_stmt(st.value)
            self.fail(st, "this expression statement has no effect in a kernel")
        if isinstance(st, ast.Assign):
            if len(st.targets) != 1:
                self.fail(st, "chained assignment is not supported")
            t, v = st.targets[0], st.value
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and len(t.elts) == len(v.elts):
                for ti, vi in zip(t.elts, v.elts):  # a, b = x, y: one assignment each
                    self.assign(st, ti, vi)
                return
            return self.assign(st, t, v)
        if isinstance(st, ast.AnnAssign):
            if st.value is None:
                self.fail(st, "a declaration needs a value")
            return self.assign(st, st.target, st.value)
        if isinstance(st, ast.AugAssign):
            op = _BINOPS.get(type(st.op))
            if op is None:
                self.fail(st, f"operator {type(st.op).__name__}= is not supported in kernels")
            tgt = self.store_target(st.target)
            return self.emit(st, f"{tgt} = {tgt} {op} {self.expr(st.value)}")
        if isinstance(st, ast.For):
            return self.for_stmt(st)
        if isinstance(st, ast.If):
            return self.if_stmt(st)
        if isinstance(st, ast.Pass):
            return
        self.fail(st, f"{type(st).__name__} statements are not supported in tileasm kernels")

    def store_target(self, t):
        if isinstance(t, ast.Subscript):
            return self.element(t)
        if isinstance(t, ast.Name):
            e = self.lookup(t.id)
            if e and e[0] == "buf" and e[1].is_var:
                return f"{e[1].name}[0]"
            if e and e[0] == "var":
                self.fail(t, f"'{t.id}' is immutable here (a loop index, a let or a parameter); use "
                             f"T.alloc_var for a value that changes")
        self.fail(t, "cannot assign to this")

    def assign(self, st, target, value):
        if isinstance(value, ast.Call):
            p = _prim(self.callee(value))
            if p in ("alloc_shared", "alloc_fragment", "alloc_local", "alloc_var"):
                if not isinstance(target, ast.Name):
                    self.fail(st, "assign an allocation to a name")
                return self.alloc(st, target.id, p, value)
        if isinstance(target, ast.Name) and self.lookup(target.id) is None and isinstance(value, ast.Call) and \
                _prim(self.callee(value)) == "get_thread_binding":  # tx = T.get_thread_binding(0): the index itself
            self.bind(target.id, ("var", self.expr(value)))
            return
        if isinstance(target, ast.Name) and self.lookup(target.id) is None:
            ok, v = self.try_const(value)
            if ok:  # a Python constant: folded where it is used
                self.env[target.id] = v
                return
            irn = self._irname(target.id)
            self.emit(st, f"let {irn} = {self.expr(value)}")
            self.bind(target.id, ("var", irn))
            return
        tgt = self.store_target(target)
        self.emit(st, f"{tgt} = {self.expr(value)}")

    def alloc(self, st, name, p, call):
        kw = {k.arg: k.value for k in call.keywords}
        args = list(call.args)
        if p == "alloc_var":
            if not args and "dtype" not in kw:
                self.fail(call, "T.alloc_var(dtype) needs a dtype")
            dt = self.dtype_of(args[0] if args else kw["dtype"])
            irn = self._irname(name)
            self.emit(st, f"{irn} = local {dt}[1]")
            self.bind(name, ("buf", Buf(irn, "local", dt, (1,), is_var=True)))
            init = args[1] if len(args) > 1 else kw.get("init")
            if init is not None:
                self.emit(st, f"{irn}[0] = {self.expr(init)}")
            return
        if len(args) < 1 or (len(args) < 2 and "dtype" not in kw):
            self.fail(call, f"T.{p}(shape, dtype) needs a shape and a dtype")
        shape = self.shape(args[0])
        dt = self.dtype_of(args[1] if len(args) > 1 else kw["dtype"])
        scope = {"alloc_shared": "shared", "alloc_fragment": "fragment", "alloc_local": "local"}[p]
        irn = self._irname(name)
        self.emit(st, f"{irn} = {scope} {dt}[{', '.join(map(str, shape))}]")
        self.bind(name, ("buf", Buf(irn, scope, dt, shape)))

    def kwargs(self, call, names, positional_from=0):
        """Positional arguments after positional_from, then keywords, by name."""
        got = {}
        for i, a in enumerate(call.args[positional_from:]):
            if i >= len(names):
                self.fail(a, "too many arguments")
            got[names[i]] = a
        for k in call.keywords:
            if k.arg not in names:
                self.fail(k, f"unknown keyword '{k.arg}' (accepted: {', '.join(names)})")
            got[k.arg] = k.value
        return got

    def bool_const(self, node, what):
        ok, v = self.try_const(node)
        if not ok or not isinstance(v, (bool, int)):
            self.fail(node, f"{what} must be a constant")
        return bool(v)

    def dim_opt(self, kw, src):
        """["dim=D"] for a dim= argument (negative counts from the end, as in TileLang), else []."""
        if "dim" not in kw:
            return []
        ok, d = self.try_const(kw["dim"])
        if not ok or not isinstance(d, int):
            self.fail(kw["dim"], "dim must be a constant")
        return [f"dim={d + len(src.shape) if d < 0 else d}"]

    def call_stmt(self, call):
        f = self.callee(call)
        p = _prim(f)
        a = call.args
        if p == "copy":
            if len(a) != 2:
                self.fail(call, "T.copy takes (src, dst)")
            self.kwargs(call, ["src", "dst", "coalesced_width", "disable_tma", "eviction_policy"], 0)
            return self.emit(call, f"copy({self.region(a[0])}, {self.region(a[1])})")
        if p == "gemm":
            kw = self.kwargs(call, ["A", "B", "C", "transpose_A", "transpose_B", "policy", "clear_accum", "k_pack",
                                    "wg_wait"])
            for need in ("A", "B", "C"):
                if need not in kw:
                    self.fail(call, f"T.gemm needs {need}")
            bufs = [self.buffer(kw[n]).name for n in ("A", "B", "C")]
            flags = []
            for k, irk in (("transpose_A", "transpose_a"), ("transpose_B", "transpose_b"), ("clear_accum", "clear")):
                if k in kw and self.bool_const(kw[k], k):
                    flags.append(f"{irk}=true")
            if "k_pack" in kw and self.try_const(kw["k_pack"])[1] not in (1, None):
                self.fail(kw["k_pack"], "k_pack other than 1 is not supported")
            return self.emit(call, f"gemm({', '.join(bufs + flags)})")
        if p == "clear":
            if len(a) != 1:
                self.fail(call, "T.clear takes one buffer")
            return self.emit(call, f"clear({self.buffer(a[0]).name})")
        if p == "fill":
            if len(a) != 2:
                self.fail(call, "T.fill takes (buffer, value)")
            return self.emit(call, f"fill({self.buffer(a[0]).name}, {self.expr(a[1])})")
        if p and p.startswith("reduce_"):
            kw = self.kwargs(call, ["buffer", "out", "dim", "clear"])
            if "buffer" not in kw or "out" not in kw:
                self.fail(call, f"T.{p} takes (src, dst, dim=..., clear=...)")
            src, dst = self.buffer(kw["buffer"]), self.buffer(kw["out"])
            opts = self.dim_opt(kw, src)
            if "clear" in kw:
                opts.append(f"clear={'true' if self.bool_const(kw['clear'], 'clear') else 'false'}")
            return self.emit(call, f"{p}({', '.join([src.name, dst.name] + opts)})")
        if p == "cumsum":
            kw = self.kwargs(call, ["src", "dst", "dim", "reverse"])
            src = self.buffer(kw["src"])
            dst = self.buffer(kw["dst"]) if "dst" in kw else src
            opts = self.dim_opt(kw, src)
            if "reverse" in kw and self.bool_const(kw["reverse"], "reverse"):
                opts.append("reverse=true")
            return self.emit(call, f"cumsum({', '.join([src.name, dst.name] + opts)})")
        if p in ("atomic_add", "atomic_max", "atomic_min"):
            if len(a) != 2:
                self.fail(call, f"T.{p} takes (dst, value)")
            val = a[1]
            if isinstance(val, ast.Name) and (self.lookup(val.id) or ("",))[0] == "buf" and \
                    not self.lookup(val.id)[1].is_var:
                v = self.buffer(val).name
            else:
                v = self.expr(val)
            return self.emit(call, f"{p}({self.region(a[0])}, {v})")
        if p == "sync_threads":
            return self.emit(call, "barrier()")
        if p == "use_swizzle":  # Tile IR's use_swizzle; TileLang: order "row", anything else column
            kw = self.kwargs(call, ["panel_size", "order", "enable"])
            if "panel_size" not in kw:
                self.fail(call, "T.use_swizzle needs a panel_size")
            if "enable" in kw and not self.bool_const(kw["enable"], "enable"):
                return
            ok, n = self.try_const(kw["panel_size"])
            if not ok or isinstance(n, bool) or not isinstance(n, int):
                self.fail(kw["panel_size"], "T.use_swizzle's panel_size must be an integer constant")
            order = "row"
            if "order" in kw:
                ok, order = self.try_const(kw["order"])
                if not ok or not isinstance(order, str):
                    self.fail(kw["order"], "T.use_swizzle's order is a string, \"row\" or \"column\"")
            return self.emit(call, f"use_swizzle({n})" if order == "row" else f"use_swizzle({n}, order=col)")
        if p == "annotate_layout":
            return  # a layout hint: tileasm chooses layouts itself (docs/python.md)
        if p:
            self.fail(call, f"T.{p} is not supported by tileasm yet (docs/python.md lists what is)")
        name = ast.unparse(call.func) if hasattr(ast, "unparse") else "this function"
        self.fail(call, f"calls to {name} are not supported in tileasm kernels")

    def loop_bounds(self, call, name):
        args = call.args
        if len(args) == 1:
            return "0", self.expr(args[0])
        if len(args) == 2:
            return self.expr(args[0]), self.expr(args[1])
        if len(args) == 3:
            ok, step = self.try_const(args[2])
            if not ok or not isinstance(step, int) or step == 0:
                self.fail(args[2], f"the step of {name} must be a nonzero constant integer")
            return self.expr(args[0]), self.expr(args[1]) + ("" if step == 1 else f" step {step}")
        self.fail(call, f"{name} takes (extent), (start, stop) or (start, stop, step)")

    def loop_var(self, t):
        if not isinstance(t, ast.Name):
            self.fail(t, "the loop variable must be a name")
        return t.id

    def for_stmt(self, st):
        if st.orelse:
            self.fail(st, "for ... else is not supported")
        it = st.iter
        if not isinstance(it, ast.Call):
            self.fail(it, "loop over T.Parallel, T.Pipelined, T.serial, T.unroll, T.vectorized or range")
        f = self.callee(it)
        p = _prim(f)
        self.scopes.append({})
        if p == "Parallel":
            tg = st.target.elts if isinstance(st.target, ast.Tuple) else [st.target]
            names = [self.loop_var(t) for t in tg]
            if len(names) != len(it.args):
                self.fail(st, f"T.Parallel has {len(it.args)} extents but {len(names)} loop variables")
            for k in it.keywords:
                if k.arg != "prefer_async":
                    self.fail(k, f"T.Parallel({k.arg}=...) is not supported")
            ext = []
            for e in it.args:
                ok, v = self.try_const(e)
                if not ok or not isinstance(v, int):
                    self.fail(e, "T.Parallel extents must be constants")
                ext.append(str(v))
            irn = [self._irname(n) for n in names]
            for n, i in zip(names, irn):
                self.bind(n, ("var", i))
            self.emit(st, f"parallel ({', '.join(irn)}) in ({', '.join(ext)}) {{")
        elif p == "Pipelined":
            kw = {k.arg: k.value for k in it.keywords}
            for k in kw:
                if k not in ("num_stages",):
                    self.fail(kw[k], f"T.Pipelined({k}=...) is not supported (tileasm schedules the stages itself)")
            if len(it.args) > 2:
                self.fail(it, "T.Pipelined takes (extent) or (start, stop)")
            lo, hi = self.loop_bounds(it, "T.Pipelined")
            stages = 0
            if "num_stages" in kw:
                ok, stages = self.try_const(kw["num_stages"])
                if not ok or not isinstance(stages, int):
                    self.fail(kw["num_stages"], "num_stages must be a constant")
            n = self.loop_var(st.target)
            irn = self._irname(n)
            self.bind(n, ("var", irn))
            # num_stages=0 ("infer") runs the loop unpipelined.
            self.emit(st, f"pipelined {irn} in {lo} .. {hi} stages({stages}) {{" if stages > 0 else
                      f"serial {irn} in {lo} .. {hi} {{")
        elif p in ("serial", "unroll", "vectorized") or f is builtins.range:
            kind = p if p in ("unroll", "vectorized") else "serial"  # vectorized: unrolled, constant bounds
            lo, hi = self.loop_bounds(it, "range" if f is builtins.range else f"T.{p}")
            n = self.loop_var(st.target)
            irn = self._irname(n)
            self.bind(n, ("var", irn))
            self.emit(st, f"{kind} {irn} in {lo} .. {hi} {{")
        else:
            self.fail(it, "loop over T.Parallel, T.Pipelined, T.serial, T.unroll, T.vectorized or range")
        self.depth += 1
        self.block(st.body)
        self.depth -= 1
        self.emit(st, "}")
        self.scopes.pop()

    def if_stmt(self, st, chained=False):
        ok, v = self.try_const(st.test)
        if ok:  # a Python flag: only the branch taken is translated
            body = st.body if v else st.orelse
            for s in body:
                self.stmt(s)
            return
        self.emit(st, f"{'} else ' if chained else ''}if {self.expr(st.test)} {{")
        self.depth += 1
        self.block(st.body)
        self.depth -= 1
        if st.orelse:
            if len(st.orelse) == 1 and isinstance(st.orelse[0], ast.If) and not self.try_const(st.orelse[0].test)[0]:
                # `else if`: emitted as "} else if ... {" by the recursive call
                self.depth_fix_else_if(st.orelse[0])
                return
            self.emit(st, "} else {")
            self.depth += 1
            self.block(st.orelse)
            self.depth -= 1
        self.emit(st, "}")

    def depth_fix_else_if(self, st):
        self.if_stmt(st, chained=True)
