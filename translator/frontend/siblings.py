"""Imports -> names, for the Binder (mixed in): what `from .helpers import f`, `from . import config`,
`import params` and `from helpers import *` bring from modules next to the file, read as they are (parsed, never
run): their constants, their device functions (lowered in their own module's names, located in their own
file) and their plain functions (compiled here by `cuda.jit(f, device=True)`)."""

from __future__ import annotations

from .dtypes import module_records


# The public names a library module's `import *` brings that a kernel may use, by module (a genetic algorithm's
# `from numba.cuda.random import *`).
LIBRARY_STARS = {
    "numba.cuda.random": ("create_xoroshiro128p_states", "init_xoroshiro128p_states", "init_xoroshiro128p_state",
                          "xoroshiro128p_next", "xoroshiro128p_jump", "xoroshiro128p_uniform_float32",
                          "xoroshiro128p_uniform_float64", "xoroshiro128p_normal_float32",
                          "xoroshiro128p_normal_float64", "xoroshiro128p_type", "xoroshiro128p_dtype"),
}


def adopt(root, sibling) -> None:
    """SIBLING's functions are lowered in ROOT's translation: located in its file, its constants declared by ROOT's
    names, its device functions in the table the program instantiates from."""
    root.reporter.adopt(sibling.reporter)
    if sibling.module_info is sibling:
        sibling.root = root
    for other in sibling.functions.values():
        if other.is_device:
            root.functions.setdefault(other.key, other)


def _its_own(sibling, name: str) -> bool:
    """Whether NAME is in the namespace of the module SIBLING: its own names, and those of a module it imports
    (`rng.draw` in a package whose __init__ does `from pkg.dev import rng`, read as `dev.rng.draw`)."""
    return "." not in name or name.split(".")[0] in sibling.aliases


class SiblingImports:
    """Needs, from the class it is mixed into: view, sibling, bound, _unbind(), _set_constant()."""

    def import_name(self, local, qualified, from_parts, level) -> None:
        self._unbind(local)
        self.bound.add(local)
        if from_parts is not None and self.sibling is not None:
            mod, level, name = from_parts
            submodule = self.sibling(f"{mod}.{name}" if mod else name, level) if level or mod else None
            if submodule is not None:  # `from . import config`: the module config.py, not its package's __init__
                self.module_names(local, submodule)
                self.view.aliases[local] = qualified
                return
            sibling = self.sibling(mod, level)
            if sibling is not None and name in module_records(sibling):  # a structured dtype: --types and
                self.view.module_info.imported_records[local] = module_records(sibling)[name]  # shared arrays
            if sibling is not None and name in sibling.constants:
                self._set_constant(local, sibling.constants[name], None)
                if name in sibling.value_notes:
                    self.view.value_notes[local] = sibling.value_notes[name]
                return
            if sibling is not None and name in sibling.nonconstant:
                self.view.nonconstant[local] = f"(imported from {mod or '.'}) {sibling.nonconstant[name]}"
                if name in sibling.needs_run:  # importing this module runs that one: the import mode reads it
                    self.view.needs_run.add(local)
                return
            if sibling is not None and name in sibling.aliases and not sibling.aliases[name].startswith(".") \
                    and name not in sibling.functions:
                # `from utils.cuda import cuda_jit` where utils/cuda.py did `from numba.cuda import jit as cuda_jit`
                # (its fallback `def cuda_jit` under `except ImportError:` never runs where Numba is)
                self.view.aliases[local] = sibling.aliases[name]
                return
            if sibling is not None and self.import_function(local, sibling, name):
                return
        elif from_parts is None and self.sibling is not None and level == 0 and ("." not in qualified or
                                                                              local != qualified.split(".")[0]):
            self.module_names(local, self.sibling(qualified, 0))  # `import params`, `import pkg.geo.box as box`
        self.view.aliases[local] = qualified

    def module_names(self, local, sibling) -> None:
        """`import params`, `from . import params`: its constants as `params.N`, its functions as `params.f`."""
        if sibling is None:
            return
        for name, value in sibling.constants.items():
            if _its_own(sibling, name):
                self.view.constants[f"{local}.{name}"] = value
                if name in sibling.value_notes:
                    self.view.value_notes[f"{local}.{name}"] = sibling.value_notes[name]
        for name in list(sibling.functions):
            if _its_own(sibling, name):
                self.import_function(f"{local}.{name}", sibling, name)

    def import_function(self, local, sibling, name) -> bool:
        """`from .helpers import f` of a device function (or @numba.jit function) of a module next to the file:
        translated with the kernels that call it, from its own file, in its own module's names (as Numba
        compiles it). Its callees come along; its nodes are located and its problems reported in its file."""
        failed = sibling.failed_functions.get(name)
        if failed is not None:  # its definition's problem, told where a kernel calls it
            why = next(iter(sibling.deferred.get(failed, ())), None)
            self.view.nonconstant[local] = (f"(imported from {sibling.path}) could not be read there" if why is None
                                            else f"is defined at {why.loc}, where {why.construct}: {why.message}")
            return True
        fi = sibling.functions.get(name)
        plain = sibling.plain_functions.get(name)
        if plain is not None and fi is None:  # a plain function this module compiles: `f = cuda.jit(f, device=True)`
            self.adopt_sibling(sibling)
            self.view.plain_functions[local] = (plain[0], plain[1], f"{sibling.path}:")
            return True
        if fi is None or fi.ufunc is not None:
            return False
        self.adopt_sibling(sibling)
        if not fi.is_device:  # a kernel called from this file's kernels: numba-cuda compiles it as a device
            # function there (its dispatcher's call template), so it comes as that device copy, not as a kernel
            if len(fi.signatures) > 1:
                return False
            fi = fi.device_copy()
            self.view.module_info.functions.setdefault(fi.key, fi)
        self.view.functions[local] = fi
        return True

    def adopt_sibling(self, sibling) -> None:
        adopt(self.view.module_info, sibling)

    def star_import(self, mod: str, level: int) -> None:
        """`from helpers import *`: the public names of a module next to the file, read as it is; of any other
        module, nothing is known (`star_imports` says which, for the messages)."""
        if not level and mod in LIBRARY_STARS:  # `from numba.cuda.random import *`: its names are known
            for name in LIBRARY_STARS[mod]:
                self._unbind(name)
                self.view.aliases[name] = f"{mod}.{name}"
            return
        sibling = self.sibling(mod, level) if self.sibling is not None else None
        if sibling is None:
            self.view.star_imports.append("." * level + mod)
            return
        for name, qualified in sibling.aliases.items():
            if not name.startswith("_"):
                self._unbind(name)
                self.view.aliases[name] = qualified
        for name, value in sibling.constants.items():
            if not name.startswith("_") and "." not in name:
                self._set_constant(name, value, None)
        for name, reason in sibling.nonconstant.items():
            if not name.startswith("_"):
                self.view.nonconstant.setdefault(name, f"(from {mod}) {reason}")
                if name in sibling.needs_run:  # computed there (np.apply_along_axis(...)): importing tells it
                    self.view.needs_run.add(name)
        # its device functions (and kernels, as device copies), as `from helpers import f` brings each
        for name in [*sibling.functions, *sibling.failed_functions, *sibling.plain_functions]:
            if not name.startswith("_") and "." not in name and name not in self.view.aliases:
                self._unbind(name)
                self.import_function(name, sibling, name)
