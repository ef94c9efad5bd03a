"""The import mode's child side, continued: stand-ins for packages that are not installed where numba2cuda runs.

A GPU project's module often imports cupy, dask, a test harness or its own optional extras at the top, for its
host code; its kernels never touch them. Numba compiles such a kernel where those packages exist; numba2cuda's
child may not have them. So when the import stops at `ModuleNotFoundError: No module named 'cupy'`, the child
puts a stand-in in its place and imports the module again, a few times at most. A stand-in answers every
attribute, call, index and arithmetic with another stand-in, so host code that only defines things with the
package runs past it, and a kernel's free name that holds one is described as what it is: a value of a package
that is not installed here (the parent's error says to install it). Where the module decides something on such
a value (`if cupy.cuda.is_available():`, `int(...)`, a loop over it), the stand-in cannot know the answer, and a
guess could bake a wrong constant into a kernel: the import stops there with StandInDecided, located at that
line. The parent notes each stand-in it was given.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types

from ..userimport import folder_sibling
#: packages never replaced: the kernel's own language; without them there is nothing to translate
NEVER = {"numba", "numpy", "llvmlite"}
MAX_STAND_INS = 6


class StandInDecided(ImportError):
    """The module needs the real value of something from a package that is not installed here. An ImportError,
    so code that probes for an optional package (`try: import scipy; scipy.__config__... except ImportError:`)
    takes its fallback, as it would where the package is missing."""


class StandIn:
    """Any value read from a package that is not installed here."""

    def __init__(self, name: str):
        object.__setattr__(self, "_n2c_name", name)

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StandIn(f"{self._n2c_name}.{attr}")

    def __setattr__(self, attr, value):
        pass

    def __call__(self, *args, **kwargs):
        return StandIn(f"{self._n2c_name}()")

    def __getitem__(self, key):
        return StandIn(f"{self._n2c_name}[]")

    def __setitem__(self, key, value):
        pass

    def _decide(self, *args):
        package = package_of(self)
        raise StandInDecided(f"the module uses the value of {self._n2c_name}, and {package} is not installed here "
                             f"(numba2cuda stood in for it); install {package} where numba2cuda runs")

    __bool__ = __iter__ = __len__ = __int__ = __float__ = __index__ = __str__ = __format__ = __eq__ = _decide
    __hash__ = object.__hash__

    def __mro_entries__(self, bases):  # `class Grid(cupy.ndarray):` makes a plain class
        return (object,)

    def __repr__(self):
        return f"<stand-in for {self._n2c_name}>"

    def _same(self, *other):
        return StandIn(self._n2c_name)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __or__ = __ror__ = _same
    __and__ = __rand__ = __lt__ = __le__ = __gt__ = __ge__ = _same


class StandInModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StandIn(f"{self.__name__}.{attr}")


class NumpyBackedModule(StandInModule):
    """CuPy where it is not installed: NumPy's names, which CuPy mirrors (`cupy.arange(10)`, `cupy.zeros_like(a)`,
    `cupy.random.rand(n)` make NumPy's arrays of the same shapes and dtypes), so a launch on them is typed as
    Numba types CuPy's arrays; what NumPy lacks (`cupy.cuda.Stream`, `cupy.RawKernel`) is a stand-in."""

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        import numpy

        if attr == "asnumpy":
            return numpy.asarray
        if attr == "get_array_module":
            return lambda *args, **kwargs: numpy
        target = numpy
        for part in self.__name__.split(".")[1:]:  # cupy.random is numpy.random
            target = getattr(target, part, None)
        if target is not None and hasattr(target, attr):
            return getattr(target, attr)
        return StandIn(f"{self.__name__}.{attr}")


#: packages stood in for by NumPy, which they mirror
NUMPY_BACKED = {"cupy"}


def package_of(value) -> str:
    """The package a StandIn or StandInModule stands in for."""
    name = value.__name__ if isinstance(value, StandInModule) else object.__getattribute__(value, "_n2c_name")
    sibling = folder_sibling(name)  # a sibling imported relatively: `.extensions_usecases`
    if sibling is not None:
        return sibling
    return name.split(".")[0]


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ROOT and every ROOT.sub as a stand-in module, for each root given."""

    def __init__(self):
        self.roots: list = []  # what the parent notes: packages, and `.name` for a sibling stood in for
        self.siblings: set = set()  # the full names of those siblings, in the module's folder package

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.roots or fullname in self.siblings or \
                fullname.rpartition(".")[0] in self.siblings:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        backed = spec.name.split(".")[0] in NUMPY_BACKED
        module = NumpyBackedModule(spec.name) if backed else StandInModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def replaceable(missing: str | None, path: str) -> bool:
    """Whether a ModuleNotFoundError for MISSING is a package numba2cuda may stand in for: a third-party one, not
    the user's own module next to PATH (a typo there is the user's to see)."""
    if not missing:
        return False
    root = missing.split(".")[0]
    if root in NEVER or root in sys.builtin_module_names:
        return False
    folder = os.path.dirname(os.path.realpath(path))
    for here in (folder, os.path.dirname(folder)):
        if os.path.exists(os.path.join(here, root + ".py")) or os.path.isdir(os.path.join(here, root)):
            return False
    return True


_FINDER = _Finder()


def stand_in_for(exc: ModuleNotFoundError, path: str) -> bool:
    """Whether the package EXC says is missing is now stood in for, so the code that failed may run again."""
    root = (exc.name or "").split(".")[0]
    if root == "numbapro" and "numbapro" not in sys.modules:
        # Numba's predecessor, whose CUDA support became numba.cuda: an old tutorial's kernels are Numba's
        import numba
        import numba.cuda

        sys.modules["numbapro"], sys.modules["numbapro.cuda"] = numba, numba.cuda
        return True
    # a sibling a module imports relatively, not in its folder (a test file copied out of its package): that
    # module alone, noted as `.extensions_usecases`; its folder package stays
    sibling = folder_sibling(exc.name or "")
    noted = sibling or root
    if len(_FINDER.roots) >= MAX_STAND_INS or noted in _FINDER.roots or \
            (sibling is None and not replaceable(exc.name, path)):
        return False
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)  # last: a package that is installed is always the real one
    _FINDER.roots.append(noted)
    if sibling is not None:
        _FINDER.siblings.add(exc.name)
        return True
    for name in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
        del sys.modules[name]  # a half-imported package of that name: the stand-in takes its place
    return True


def import_with_stand_ins(load, path: str):
    """(module, stand-in roots) of LOAD(): each package missing here is stood in for, and LOAD runs again. The
    roots list is live: a test the import mode runs later may add to it (runentries.py)."""
    while True:
        try:
            return load(), _FINDER.roots
        except ModuleNotFoundError as exc:
            if not stand_in_for(exc, path):
                raise
