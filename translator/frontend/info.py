"""What the frontend learns of a module before lowering: its functions (FunctionInfo) and names (ModuleInfo).

Kept apart from module.py, which fills them in, so that names.py and constants.py (which module.py
uses) can take a ModuleInfo without importing their caller."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..errors import Reporter


@dataclass
class FunctionInfo:
    name: str
    node: cst.FunctionDef
    is_device: bool
    params: list[str]
    signature: tuple | None  # (return type or None, [param types]) from the decorator
    annotations: dict  # param -> type, from annotations
    options: dict
    enclosing: cst.FunctionDef | None  # set for kernels defined inside a function
    ufunc: object = None  # a frontend.ufuncs.UfuncSpec for @vectorize/@guvectorize(target="cuda")


@dataclass
class ModuleInfo:
    path: str
    source: str
    module: cst.Module
    reporter: Reporter
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    constants: dict[str, object] = field(default_factory=dict)  # name -> int|float|bool|tuple|ConstArray|Typed
    constant_nodes: dict[str, cst.CSTNode] = field(default_factory=dict)
    nonconstant: dict[str, str] = field(default_factory=dict)  # module-level name -> why kernels cannot use it
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    failed_functions: set = field(default_factory=set)  # @cuda.jit functions whose header was reported
    declared_types: dict = field(default_factory=dict)  # kernel -> {param: type}, from NUMBA2CUDA_TYPES
    declared_type_nodes: dict = field(default_factory=dict)  # kernel -> its key's node, for errors
    declared_types_broken: bool = False  # reported; kernels then lacking types are not reported again

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)
