"""`f = cuda.declare_device(name, sig, link=path)` -> the foreign function a kernel calls, and the CUDA source it
links, which the translation carries (Numba compiles and links that file with the kernel; one .cu that compiles
on its own has to hold it).

Numba's ABI (the default) returns through a first pointer argument and returns a status int:
`extern "C" __device__ int mul(float *ret, float x, float y)`; a small wrapper makes it a value-returning call.
`abi="c"` functions are called as declared. The paths are read from the source as Numba's users write them
(`os.path.join(os.path.dirname(os.path.abspath(__file__)), "ffi", "functions.cu")`, `Path(__file__).parent / ...`),
never by running the module; an `#include` in the linked file is carried too when it is found next to it or in
the folders `config.CUDA_NVRTC_EXTRA_SEARCH_PATHS` is set to.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import libcst as cst

from ..errors import Unsupported
from ..ir import intrinsics
from ..ir import nodes as ir
from ..ir import typesys as T
from ..ir.facts import mark_written
from .jitoptions import signature_node, type_text
from .names import resolve
from .scan import find_nodes

MAX_DEPTH = 24
MAX_LINKED_BYTES = 1 << 20
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
PATH_FUNCTIONS = {"os.path.join": os.path.join, "os.path.dirname": os.path.dirname,
                  "os.path.abspath": os.path.abspath, "os.path.realpath": os.path.realpath,
                  "os.path.normpath": os.path.normpath, "str": str, "os.fspath": str,
                  "pathlib.Path": os.path.join, "Path": os.path.join, "pathlib.PurePath": os.path.join}


@dataclass
class Foreign:
    symbol: str  # the C function's name
    ret: object  # its Numba result type
    args: list  # its Numba argument types
    abi: str  # "numba" or "c"
    sources: list = field(default_factory=list)  # [(path, text)] of the files it links, includes carried
    cooperative: bool = False  # use_cooperative=True: its code syncs the grid, so the kernel launches cooperatively

    @property
    def c_name(self) -> str:
        return self.symbol if self.abi == "c" else f"{self.symbol}_value"

    def wrapper(self) -> str:
        """The value-returning call of a Numba-ABI function (none for abi="c")."""
        if self.abi == "c":
            return ""
        params = ", ".join(f"{T.c_name(t.dtype)} *a{k}" if isinstance(t, T.Array) else f"{T.c_name(t)} a{k}"
                           for k, t in enumerate(self.args))
        args = "".join(f", a{k}" for k in range(len(self.args)))
        if self.ret == T.VOID:
            # numba-cuda's test declares `int f(int *ret, ...)` for a void result: the slot's type is the
            # definition's, which only the compiler reads from it
            return (f"// cuda.declare_device(\"{self.symbol}\"): Numba's ABI passes a result slot first, unused by "
                    f"a void function\ntemplate <typename R, typename P, typename... A> __device__ P "
                    f"{self.symbol}_slot(R (*)(P, A...));\n__device__ __forceinline__ void {self.c_name}({params})\n"
                    f"{{\n    alignas(16) unsigned char r[16];\n    {self.symbol}((decltype({self.symbol}_slot(&"
                    f"{self.symbol})))r{args});\n}}")
        ret = T.c_name(self.ret)
        return (f"// cuda.declare_device(\"{self.symbol}\"): Numba's ABI returns through the first argument\n"
                f"__device__ __forceinline__ {ret} {self.c_name}({params})\n{{\n    {ret} r;\n"
                f"    {self.symbol}(&r{args});\n    return r;\n}}")


class ForeignCallLowerer:
    """Calls of cuda.declare_device functions (mixed into the expression lowerer). Needs: info, expr(), foreign
    (symbol -> Foreign), cooperative."""

    def foreign_call(self, node, decl, args, kwargs):
        """A function declared with cuda.declare_device: called as declared, its linked source carried (read once
        per declaration, however many calls and functions use it)."""
        known = self.info.declared_devices
        foreign = known.get(id(decl))
        if foreign is None:
            foreign = known[id(decl)] = declared(self.info, decl)
        if kwargs or len(args) != len(foreign.args):
            raise Unsupported(node, f"call to {foreign.symbol}()", f"takes {len(foreign.args)} positional "
                              f"argument(s), as declared, got {len(args) + len(kwargs)}")
        self.foreign[foreign.symbol] = foreign
        self.cooperative |= foreign.cooperative
        pointers = {k: t.dtype for k, t in enumerate(foreign.args) if isinstance(t, T.Array)}
        entry = intrinsics.Intrinsic(f"ffi.{foreign.symbol}", foreign.c_name, lambda ts: foreign.ret,
                                     (len(foreign.args),) * 2, pointers=pointers,
                                     arg_types=lambda ts: [None if k in pointers else t
                                                           for k, t in enumerate(foreign.args)])
        return ir.Call(entry, [self.pointer_argument(a) if k in pointers else self.expr(a)
                               for k, a in enumerate(args)])

    def pointer_argument(self, node):
        """A CPointer argument: a pointer `ffi.from_buffer(a)` made (the typer checks its element type)."""
        v = self.value(node)
        if not isinstance(v, ir.ArrayVar) or not v.pointer:
            raise Unsupported(node, f"argument '{self.info.code(node)}'", "the foreign function takes a CPointer "
                              "here, and Numba passes an array to it only as a pointer", "pass ffi.from_buffer(a)")
        mark_written(v)  # the foreign code may write through it, so C cannot call the array const
        ref = ir.ArrayRef(v)
        ref.node = node
        return ref

    def from_buffer(self, node, args, kwargs):
        """`ffi.from_buffer(a)` (cffi's, as Numba types it): a CPointer to the first element of a C-contiguous
        array, passed to a foreign function."""
        if kwargs or len(args) != 1:
            raise Unsupported(node, "ffi.from_buffer()", "takes one array")
        arr = self.value(args[0])
        if not isinstance(arr, ir.ArrayVar):
            raise Unsupported(args[0], "ffi.from_buffer() argument", "must be an array")
        if arr.pitch is not None or arr.step is not None:
            raise Unsupported(args[0], f"ffi.from_buffer({self.info.code(args[0])})", "the array is not "
                              "contiguous, and Numba refuses non-contiguous buffers too", "pass a contiguous array")
        return ir.ArrayVar("", arr.dtype, [None], "view", base=arr, pointer=True)


def declared(info, decl: cst.Call) -> Foreign:
    """The foreign function DECL (a cuda.declare_device call) declares, its linked sources read."""
    args = [a for a in decl.args if a.keyword is None]
    kwargs = {a.keyword.value: a.value for a in decl.args if a.keyword is not None}
    name_node = args[0].value if args else kwargs.get("name")
    sig_node = args[1].value if len(args) > 1 else kwargs.get("sig")
    if name_node is None or sig_node is None:
        raise Unsupported(decl, "cuda.declare_device()", "takes the function's name and its signature")
    symbol = _string(info, name_node)
    # "int32(int32)", or Numba's types written out: types.void(types.CPointer(types.int32))
    sig = _literal(info, sig_node)
    sig = sig if sig is not None else type_text(info, signature_node(info, sig_node))
    try:
        ret, types = T.parse_signature(sig)
    except T.TypeStringError as exc:
        raise Unsupported(sig_node, "cuda.declare_device() signature", str(exc)) from None
    abi = _string(info, kwargs["abi"]) if "abi" in kwargs else "numba"
    if abi not in ("numba", "c"):
        raise Unsupported(kwargs["abi"], "cuda.declare_device() abi", f"'{abi}' is not one of 'numba' and 'c'")
    if ret is None or isinstance(ret, T.Tuple):
        raise Unsupported(sig_node, "cuda.declare_device() signature", "numba2cuda calls foreign functions that "
                          "return one number or nothing", "declare it as 'float32(float32, float32)'")
    links = [kwargs["link"]] if "link" in kwargs else _kernel_links(info)
    if not links:
        raise Unsupported(decl, f"foreign device function '{symbol}'", "no link= names the CUDA source that "
                          "defines it, which the translation must carry",
                          "pass link=PATH to cuda.declare_device, or to the @cuda.jit of the kernel that calls it")
    link = links[0]
    items = [(item, *_cusource(info, item)) for node in links for item in _link_items(info, node)]
    inline = [(f"cuda.CUSource at {os.path.basename(info.path)}:{info.reporter.location(made).line}", text)
              for _, made, text in items if text is not None]
    paths = list(dict.fromkeys(path_of(info, item) for item, _, text in items if text is None))
    search = _search_paths(info)
    here = os.path.dirname(os.path.abspath(info.path))
    paths = [p if os.path.isabs(p) or not os.path.isfile(os.path.join(here, p)) else os.path.join(here, p)
             for p in paths]  # relative: next to the module, else (as Numba reads it) the working folder
    sources = []
    for path in paths:
        if not path.endswith((".cu", ".cuh", ".h")):
            raise Unsupported(link, f"link '{os.path.basename(path)}'", "numba2cuda carries CUDA C++ source (.cu); "
                              "PTX, cubins and libraries are not translated", "link the .cu the function is in")
        sources.append((path, _carry(path, search, link, set())))
    sources += inline
    cooperative = kwargs.get("use_cooperative")
    return Foreign(symbol, ret, types, abi, sources,
                   cooperative=isinstance(cooperative, cst.Name) and cooperative.value == "True")


def _kernel_links(info) -> list:
    """The link= arguments of the module's @cuda.jit decorators: Numba links those files with the kernel, so a
    function declared without a link= of its own is found there (flauers' matmul kernels)."""
    return [arg.value for call in find_nodes(info.module, lambda n: isinstance(n, cst.Call))
            if resolve(info, call.func) == "cuda.jit"
            for arg in call.args if arg.keyword is not None and arg.keyword.value == "link"]


def _link_items(info, node) -> list:
    """link=[a, b] or link=a: the path expressions. The container does not matter to linking: set([a, b]),
    tuple([a, b]), or a helper's `link_type([a, b])` with link_type a parameter (numba-cuda's test of set, tuple
    and list), also through a name bound to it."""
    if isinstance(node, cst.Name) and isinstance(info.value_nodes.get(node.value), cst.Call):
        node = info.value_nodes[node.value]
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and len(node.args) == 1 \
            and isinstance(node.args[0].value, (cst.List, cst.Tuple, cst.Set)) \
            and (node.func.value in ("set", "tuple", "list", "frozenset") and node.func.value not in info.aliases
                 or str(info.nonconstant.get(node.func.value, "")).startswith("is a parameter of")):
        node = node.args[0].value
    return [el.value for el in node.elements] if isinstance(node, (cst.List, cst.Tuple, cst.Set)) else [node]


def _cusource(info, node):
    """(the call, its text) where NODE is `cuda.CUSource("...")` of a string in the source (or a name bound to
    one): CUDA source given inline, which Numba compiles and links as a file; else (None, None)."""
    if isinstance(node, cst.Name) and isinstance(info.value_nodes.get(node.value), cst.Call):
        node = info.value_nodes[node.value]
    text = _literal(info, node.args[0].value) if isinstance(node, cst.Call) and node.args \
        and resolve(info, node.func) == "cuda.CUSource" else None
    return (node, text) if text is not None else (None, None)


def _literal(info, node) -> str | None:
    """The string NODE is written as (or a name bound once to one is), else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)) and isinstance(node.evaluated_value, str):
        return node.evaluated_value
    if isinstance(node, cst.Name) and isinstance(info.value_nodes.get(node.value), cst.BaseExpression):
        return _literal(info, info.value_nodes[node.value])
    return None


def _string(info, node) -> str:
    text = _literal(info, node)
    if text is None:
        raise Unsupported(node, "cuda.declare_device() argument", "must be a string written in the source")
    return text


def path_of(info, node, depth: int = 0) -> str:
    """The file path NODE spells, read as Python would compute it (without running anything)."""
    if depth > MAX_DEPTH:
        raise Unsupported(node, "link path", "is built too indirectly to read")
    value = _path(info, node, depth)
    if not isinstance(value, str):
        raise Unsupported(node, "link path", "numba2cuda reads paths made of strings, __file__, os.path and "
                          "pathlib calls", "write the path as a string, or relative to __file__")
    return value


def _path(info, node, depth):
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return node.evaluated_value
    if isinstance(node, cst.Name):
        if node.value == "__file__":
            return os.path.abspath(info.path)
        bound = info.value_nodes.get(node.value)
        if bound is not None:
            return path_of(info, bound, depth + 1)
        return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.Add)):
        left, right = path_of(info, node.left, depth + 1), path_of(info, node.right, depth + 1)
        return os.path.join(left, right) if isinstance(node.operator, cst.Divide) else left + right
    if isinstance(node, cst.Attribute) and node.attr.value == "parent":  # pathlib
        return os.path.dirname(path_of(info, node.value, depth + 1))
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("resolve", "absolute") and not node.args:
            return os.path.abspath(path_of(info, func.value, depth + 1))
        if isinstance(func, cst.Attribute) and func.attr.value == "join" and len(node.args) == 1 \
                and isinstance(node.args[0].value, (cst.List, cst.Tuple)):  # ":".join([a, b])
            sep = path_of(info, func.value, depth + 1)
            return sep.join(path_of(info, el.value, depth + 1) for el in node.args[0].value.elements)
        canon = resolve(info, func) or (func.value if isinstance(func, cst.Name) else None)
        if canon in PATH_FUNCTIONS and node.args and all(a.keyword is None for a in node.args):
            return PATH_FUNCTIONS[canon](*[path_of(info, a.value, depth + 1) for a in node.args])
    return None


def _search_paths(info) -> list[str]:
    """The folders `config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = "a:b"` names, where the module sets it."""
    found = []
    for assign in find_nodes(info.module, lambda n: isinstance(n, cst.Assign)):
        for target in assign.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "CUDA_NVRTC_EXTRA_SEARCH_PATHS":
                try:
                    found += path_of(info, assign.value).split(":")
                except Unsupported:
                    pass
    return [f for f in found if f]


def _carry(path, search, node, seen: set) -> str:
    """PATH's text with the includes found next to it (or in SEARCH) carried in place, each once."""
    if not os.path.isfile(path):
        raise Unsupported(node, f"link '{path}'", "no such file (a relative path is looked for next to the module, "
                          "then in the working folder)", "link= must name the CUDA source file")
    if path in seen:
        return ""
    seen.add(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read(MAX_LINKED_BYTES + 1)
    if len(text) > MAX_LINKED_BYTES:
        raise Unsupported(node, f"link '{os.path.basename(path)}'", "is larger than 1 MiB")

    def include(m):
        kind, name = m.group(1), m.group(2)
        folders = [os.path.dirname(path)] + list(search) if kind == '"' else list(search) + [os.path.dirname(path)]
        for folder in folders:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                inner = _carry(os.path.realpath(candidate), search, node, seen)
                return f"// {m.group(0).strip()} (carried from {candidate})\n{inner}"
        if kind == '"':
            raise Unsupported(node, f"link '{os.path.basename(path)}'", f"includes \"{name}\", which is not next to "
                              "it nor in config.CUDA_NVRTC_EXTRA_SEARCH_PATHS", "put the header next to the file")
        return m.group(0)  # a system header: <cuda_fp16.h>

    return INCLUDE.sub(include, text)
