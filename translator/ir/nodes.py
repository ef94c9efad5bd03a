"""KernelIR: the typed, structured program the lowering builds and the C printer reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import typesys as T


# ------------------------------------------------------------------ arrays

@dataclass(eq=False)
class ArrayVar:
    """An array the kernel can index: a parameter, a shared/local/constant array, or a view of one."""
    name: str  # C name
    dtype: T.Scalar
    shape: list  # Expr per dimension
    kind: str  # "param" | "shared" | "dynamic" | "local" | "const" | "view" | "alias" (see ArrayBind)
    c_dims: bool = False  # declared as a C multi-dimensional array (t[16][17]) rather than flat
    base: "ArrayVar | None" = None  # for views
    offset: "Expr | None" = None  # element offset of a view into its base
    written: bool = False
    decl_loc: object = None
    shape_used: set = field(default_factory=set)  # parameter dimensions the kernel reads
    # a window (`a[i:i+3, j:j+3]`): per dimension d >= 1, the extent that steps one index of dimension d - 1
    # (the viewed array's, not the window's own); None for arrays laid out by their own shape
    pitch: "list | None" = None
    # a strided view (`a[:, j]`, `a[0:3, x, y]`): what one step of its last dimension moves over in the viewed
    # array; every flat index is multiplied by it. Such a view has a pitch too (layout "S")
    step: "Expr | None" = None
    pointer: bool = False  # a CPointer parameter: indexed as is, no length, no wraparound
    fortran: bool = False  # a column-major parameter ("F"): its first index steps by one element

    def exprs(self) -> list:
        """The expressions an array's layout is computed from: its shape, its offset, its pitch."""
        return [s for s in self.shape if isinstance(s, Expr)] + ([self.offset] if self.offset is not None else []) \
            + [p for p in (self.pitch or []) + [self.step] if isinstance(p, Expr)]

    @property
    def ndim(self) -> int:
        return len(self.shape)


# ------------------------------------------------------------------ expressions

@dataclass(eq=False)
class Expr:
    type: object = field(default=None, init=False)  # Numba type, set by the typer
    node: object = field(default=None, init=False, repr=False)  # libcst node, for locations

    @property
    def ctype(self):
        """The type the C expression has (may differ from the Numba type, e.g. threadIdx.x is unsigned)."""
        return self.type


@dataclass(eq=False)
class Const(Expr):
    value: object
    const_type: T.Scalar
    name: str = ""  # the module constant it came from, printed by name

    def __post_init__(self):
        self.type = self.const_type

    @property
    def ctype(self):
        if self.const_type.is_int and not self.name and self.const_type.bits == 64 and -2**31 <= self.value < 2**31:
            return T.INT32  # printed as a plain int literal
        return self.const_type


@dataclass(eq=False)
class Name(Expr):
    name: str  # Python name
    defs: frozenset = frozenset()  # one of its reaching definitions (they share a web), set by dataflow
    reach: frozenset = frozenset()  # all of its reaching definitions: Numba types the use as their unification
    maybe_undefined: bool = False  # some path reaches this use without an assignment
    var: "Variable | None" = None

    @property
    def ctype(self):
        return self.var.c_type if self.var is not None and self.var.c_type is not None else self.type


@dataclass(eq=False)
class Builtin(Expr):
    """A CUDA built-in variable or constant expression: threadIdx.x, warpSize."""
    text: str
    numba_type: T.Scalar
    c_type: T.Scalar

    def __post_init__(self):
        self.type = self.numba_type

    @property
    def ctype(self):
        return self.c_type


@dataclass(eq=False)
class BinOp(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class Unary(Expr):
    op: str  # "-", "+", "~", "not"
    operand: Expr


@dataclass(eq=False)
class Compare(Expr):
    op: str  # "<", "<=", ">", ">=", "==", "!="
    left: Expr
    right: Expr


@dataclass(eq=False)
class BoolOp(Expr):
    op: str  # "and" | "or"
    values: list


@dataclass(eq=False)
class IfExp(Expr):
    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(eq=False)
class Member(Expr):
    """z.real / z.imag: a part of a complex number (of a real number: the number itself, or zero); a record's
    field (states[i]["s0"]: typesys.RECORD_FIELDS)."""
    value: Expr
    field: str  # "real" | "imag" | a record's field


@dataclass(eq=False)
class Cast(Expr):
    to: T.Scalar
    value: Expr


@dataclass(eq=False)
class Call(Expr):
    """A call of a CUDA/C function or an n2c helper; `intrinsic` is the table entry."""
    intrinsic: object
    args: list
    c_name: str = ""
    result_ctype: object = None

    @property
    def ctype(self):
        return self.result_ctype or self.type


@dataclass(eq=False)
class Load(Expr):
    array: ArrayVar
    indices: list
    wrap: list = field(default_factory=list)  # per index: needs Python's negative-index wraparound
    field: str | None = None  # a field of a record element (`a[i].x`): the struct member read or written
    sub: list | None = None  # an element of a record's array field (`r.h[k]`): its indices, C's h[k0][k1]


@dataclass(eq=False)
class AddressOf(Expr):
    target: Load


@dataclass(eq=False)
class ShapeOf(Expr):
    array: ArrayVar
    dim: int


@dataclass(eq=False)
class PitchOf(Expr):
    """The pitch parameter of a device function's window parameter (`name_pitch1`): see ArrayVar.pitch; dim ==
    ndim is a strided parameter's step (`name_step`): see ArrayVar.step."""
    array: ArrayVar
    dim: int


@dataclass(eq=False)
class ArrayRef(Expr):
    """An array passed whole, as a device-function argument."""
    array: ArrayVar


@dataclass(eq=False)
class DeviceCall(Expr):
    func_name: str
    args: list
    target: object = None  # the DeviceFunction instance chosen by argument types
    key: str = ""  # the callee's key in ModuleInfo.functions (differs from func_name inside an enclosing function)
    # per Python argument, how many of ARGS a tuple passed whole became (None: one plain argument); None when no
    # tuple is passed. The callee takes the items as parameters of their own, so ARGS and its params stay 1:1.
    groups: list = None
    returned_array: object = None  # the ArrayVar passed for the parameter the callee returns (`return color`)
    optional: bool = False  # the callee returns None on some paths: it returns (value, is not None)


@dataclass(eq=False)
class StringLit(Expr):
    value: str


# ------------------------------------------------------------------ statements

@dataclass(eq=False)
class Stmt:
    node: object = field(default=None, repr=False)  # libcst statement, for the `// file.py:LINE` comment


@dataclass(eq=False)
class Assign(Stmt):
    target: Name = None
    value: Expr = None
    def_id: int = -1


@dataclass(eq=False)
class Store(Stmt):
    target: Load = None
    value: Expr = None


@dataclass(eq=False)
class ArrayDecl(Stmt):
    array: ArrayVar = None


@dataclass(eq=False)
class ArrayBind(Stmt):
    """`a = x`, or `a = x if c else y`, for an array name Numba binds to more than one array: the name is a
    pointer (declared at the top of the function) with its own extents, pointed at the array chosen."""
    alias: ArrayVar = None
    source: ArrayVar = None
    cond: "Expr | None" = None
    orelse: ArrayVar | None = None


@dataclass(eq=False)
class If(Stmt):
    cond: Expr = None
    body: list = field(default_factory=list)
    orelse: list = field(default_factory=list)


@dataclass(eq=False)
class ForRange(Stmt):
    target: Name = None
    start: Expr = None
    stop: Expr = None
    step: Expr = None
    body: list = field(default_factory=list)
    def_id: int = -1
    counter: str | None = None  # hidden C counter when the Python variable outlives the loop


@dataclass(eq=False)
class While(Stmt):
    cond: Expr = None
    body: list = field(default_factory=list)


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


@dataclass(eq=False)
class Return(Stmt):
    values: list = field(default_factory=list)  # 0 (bare), 1, or several (tuple)


@dataclass(eq=False)
class ExprStmt(Stmt):
    value: Expr = None


@dataclass(eq=False)
class Print(Stmt):
    items: list = field(default_factory=list)


@dataclass(eq=False)
class TupleCall(Stmt):
    """`a, b = f(x)` for a device function returning a tuple."""
    targets: list = field(default_factory=list)  # Name
    call: DeviceCall = None
    def_ids: list = field(default_factory=list)


@dataclass(eq=False)
class Declare(Stmt):
    """Inserted by the declaration planner: `T x;` ahead of a block that assigns x conditionally."""
    var: "Variable" = None


# ------------------------------------------------------------------ functions

@dataclass(eq=False)
class Variable:
    """One C variable: a Python name's web of definitions that reach common uses, with one type."""
    py_name: str
    c_name: str
    type: object = None
    declared_at: object = None  # Assign/ForRange that declares it, or None for a separate Declare
    is_param: bool = False
    c_type: object = None  # the C declaration's type where narrower than Numba's (analysis/counters.py)
    loop_counter: bool = False  # a for loop's counter used only inside it, declared in the for header


@dataclass(eq=False)
class Param:
    name: str
    type: object  # Scalar or Array
    array: ArrayVar | None = None
    # an item of a tuple parameter, which C takes as one parameter per item: (the Python parameter's name, the
    # item's index, the tuple's type)
    item_of: tuple | None = None


def spread_param(name: str, ty, taken) -> list:
    """The C parameters of a kernel parameter C cannot take whole: a tuple's items (name_0, name_1, ...) or a
    complex number's parts (name_re, name_im, which the launchers pass by value); [] for any other. Each name
    gets underscores until TAKEN(name) is false (a local or another parameter may already hold it)."""
    if isinstance(ty, T.Tuple):
        # a tuple of tuples: the items of each inner tuple (planes_1_0_2), as the caller passes them flat
        parts = []
        for k, t in enumerate(ty.items):
            parts += [(p.name, p.type) for p in spread_param(f"{name}_{k}", t, lambda n: False)] \
                if isinstance(t, T.Tuple) else [(f"{name}_{k}", t)]
    elif isinstance(ty, T.Scalar) and ty.is_complex:
        parts = [(f"{name}_re", T.underlying(ty)), (f"{name}_im", T.underlying(ty))]
    else:
        return []
    out = []
    for k, (c_name, t) in enumerate(parts):
        while taken(c_name):
            c_name += "_"
        out.append(Param(c_name, t, item_of=(name, k, ty)))
    return out


@dataclass(frozen=True)
class PythonParam:
    """A parameter as Python passes it: a tuple parameter is one, whatever number of C parameters it became."""

    name: str
    type: object  # Scalar, Array or Tuple
    params: tuple  # its Param(s)

    @property
    def array(self):
        return self.params[0].array if self.params[0].item_of is None else None


@dataclass(eq=False)
class Function:
    name: str
    is_kernel: bool
    params: list  # Param
    body: list
    return_type: object = T.VOID
    variables: list = field(default_factory=list)
    node: object = None
    options: dict = field(default_factory=dict)
    assumptions: set = field(default_factory=set)  # integer params assumed >= 0 (checked at launch)
    template_params: list = field(default_factory=list)  # specialised integer params (tile widths)
    # values of one call of the host function that makes the kernel, which Numba bakes in per call:
    # [(Python name, C name, type)], the kernel's `template <int64_t N, bool F>` (frontend/percall.py)
    per_call: list = field(default_factory=list)
    captured: list = field(default_factory=list)  # device arrays of the module it reads: its last parameters

    @property
    def python_params(self) -> list:
        """The parameters as a launch passes them (PythonParam): the items of a tuple parameter together."""
        out = []
        for p in self.params:
            if p.item_of is None:
                out.append(PythonParam(p.name, p.type, (p,)))
            elif p.item_of[1] == 0:
                out.append(PythonParam(p.item_of[0], p.item_of[2], (p,)))
            else:
                last = out[-1]
                out[-1] = PythonParam(last.name, last.type, last.params + (p,))
        return out
