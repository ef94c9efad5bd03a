"""C-ready Program -> the C name of everything the .cu declares, from one NameTable per scope (ir/cnames.py).

The module's scope holds the kernels (with their `_launch` launchers), the device functions (with their
`_result` structs) and the module constants; each function's scope holds the globals it refers to (a local of
the same name would hide them), then its parameters, variables and arrays in order, then its template
parameters; names the printer makes up later (extents, loop bounds, counters) are claimed from the same table
(`fn.names`), after every user name. A user name is kept unless it is reserved or taken; a renamed one records
its Python spelling (`.renamed_from`) for the printer's line comment."""

from __future__ import annotations

from ..analysis.dataflow import walk_body, walk_expr, walk_statements
from ..ir import nodes as ir
from ..ir import typesys as T
from ..ir.cnames import NameTable


def name_program(program) -> None:
    """Claim C names for the functions, constants and locals not named yet (a program may gain kernels later:
    the LLM backend's shells, whose C name is the model's and is kept)."""
    module = getattr(program, "module_names", None)
    if module is None:
        module = program.module_names = NameTable()
        program.constant_names = {}
    kernels = [fn for fn in program.kernels if not hasattr(fn, "names")]
    shells = [fn for fn in kernels if hasattr(fn, "external_code")]  # named by the model's code
    for fn in shells:
        fn.entry_name = fn.c_name
        module.taken.update({fn.c_name, f"{fn.c_name}_launch"})
    kernels = [fn for fn in kernels if fn not in shells]
    for fn in kernels:  # the program's name stays the entry's (a signature's own, when a kernel has several)
        fn.entry_name = fn.c_name
        fn.c_name = _rename(fn, fn.c_name if fn.c_name == fn.name else "", module.claim(fn.c_name, "_launch"))
    devices = [fn for fn in program.device_functions() if not hasattr(fn, "names")]
    firsts = [fn for fn in devices if fn.c_name == fn.name]  # each function's first instance keeps its name
    for fn in firsts + [fn for fn in devices if fn.c_name != fn.name]:
        fn.c_name = _rename(fn, fn.c_name, module.claim(fn.c_name))
        if isinstance(fn.return_type, T.Tuple):
            fn.result_name = module.claim(f"{fn.c_name}_result")
    for name in program.info.constants:
        if name not in program.constant_names:
            program.constant_names[name] = module.claim(name)
    for fn in devices + kernels:
        name_function(fn, program.constant_names)


def entry_name(fn: ir.Function) -> str:
    """The name a kernel is reached by from Python (the binding's function, the module's attribute, verify's
    and bench's key): the Python name, or one per signature when a kernel has several; its C name may differ."""
    return getattr(fn, "entry_name", fn.c_name)


def name_function(fn: ir.Function, constant_names: dict) -> None:
    """Claim the C names of one function's scope (once); the printer claims its made-up names from fn.names."""
    if hasattr(fn, "names"):
        return
    table = fn.names = NameTable()
    for node in walk_body(fn.body):
        if isinstance(node, ir.Const) and node.name:
            table.taken.add(constant_names.get(node.name, node.name))
        elif isinstance(node, ir.DeviceCall) and node.target is not None:
            table.taken.add(node.target.c_name)
            if getattr(node.target, "result_name", None):
                table.taken.add(node.target.result_name)
    for arr in getattr(fn, "arrays", []):
        if arr.kind == "const":
            arr.py_name = getattr(arr, "py_name", arr.name)
            arr.name = constant_names.get(getattr(arr, "const_name", arr.py_name), arr.name)
            table.taken.add(arr.name)
    if fn.per_call:  # the kernel's template parameters: before its own names, which C++ may not reuse
        fn.per_call = [(py, table.claim(c), ty) for py, c, ty in fn.per_call]
        claimed = {py: c for py, c, _ in fn.per_call}
        for node in walk_body(fn.body):
            if getattr(node, "per_call", False):
                node.text = claimed[node.py_name]
    shared: dict = {}  # the typer's C name -> the claimed one: loop counters of the same name share it
    variables = [p.variable for p in fn.params if getattr(p, "variable", None) is not None]
    apart = _bound_under_counter(fn) | _counters_over_their_name(fn)
    for p in fn.params:
        if p.array is not None:
            _name_array(p.array, table)
        elif getattr(p, "variable", None) is not None:
            _name_variable(p.variable, table, shared)
        else:
            p.c_name = _rename(p, p.name, table.claim(p.name))
    for var in fn.variables:
        if all(var is not v for v in variables):
            _name_variable(var, table, shared, apart)
    for arr in getattr(fn, "arrays", []):
        if arr.kind != "const" and not hasattr(arr, "py_name"):
            _name_array(arr, table)
    fn.template_params = [(p, table.claim(t), values) for p, t, values in getattr(fn, "template_params", [])]


def _bound_under_counter(fn: ir.Function) -> set:
    """The variables a loop's body binds under the name of the loop's own counter (`for i in range(n): i +=
    offset` reads the counter and binds another variable): C may not redeclare the counter there, and an
    assignment to it would change the loop's count, so each gets a C name of its own."""
    out = set()
    for s in walk_statements(fn.body):
        counter = s.target.var if isinstance(s, ir.ForRange) and s.target.var is not None else None
        if counter is None or not counter.loop_counter:
            continue
        for inner in walk_statements(s.body):
            targets = inner.targets if isinstance(inner, ir.TupleCall) else \
                [inner.target] if isinstance(inner, (ir.Assign, ir.ForRange)) else []
            out.update(id(t.var) for t in targets if isinstance(t, ir.Name) and t.var is not None
                       and t.var is not counter and t.var.c_name == counter.c_name)
    return out


def _counters_over_their_name(fn: ir.Function) -> set:
    """Loop counters whose range() reads another variable of their name (a grid-stride loop's `i = cuda.grid(1);
    for i in range(i, n, stride)`): Python evaluates the bounds before it binds the counter, but a counter declared
    in C's for-header would be read in its own initialiser, so each gets a C name of its own."""
    out = set()
    for s in walk_statements(fn.body):
        counter = s.target.var if isinstance(s, ir.ForRange) else None
        if counter is not None and any(isinstance(n, ir.Name) and n.var is not None and n.var is not counter
                                       and n.var.c_name == counter.c_name
                                       for e in (s.start, s.stop, s.step) for n in walk_expr(e)):
            out.add(("counter", id(counter)))
    return out


def _name_variable(var: ir.Variable, table: NameTable, shared: dict, apart: set = frozenset()) -> None:
    # loop counters of one name share it (each is its own for's), unless set apart
    key = (var.c_name, id(var) in apart, ("counter", id(var)) in apart)
    if key in shared:
        var.c_name = shared[key]
        return
    preferred = var.c_name
    if not preferred.isidentifier():  # a temporary of the frontend's, spelled so no Python name can be it
        preferred = preferred.replace(".", "") + "_"
    internal = preferred != var.c_name
    shared[key] = var.c_name = _rename(var, "" if internal else var.py_name, table.claim(preferred), preferred)


def _name_array(arr: ir.ArrayVar, table: NameTable) -> None:
    arr.py_name = arr.name
    arr.name = _rename(arr, arr.py_name, table.claim(arr.py_name))


def _rename(owner, py_name: str, c_name: str, preferred: str | None = None) -> str:
    """c_name, noting on `owner` the Python name it replaces when C could not keep it (for the line comment)."""
    if py_name and c_name != (preferred or py_name):
        owner.renamed_from = py_name
    return c_name


def renamed(owner) -> str:
    """`py -> c` for a user name C could not keep, else ""."""
    py = getattr(owner, "renamed_from", "")
    if not py:
        return ""
    c = getattr(owner, "c_name", None) or getattr(owner, "name", "")
    return f"{py} -> {c}"
