"""Property: any view a subscript of integers and step-1 slices (negative bounds too) makes of a 3-D array (a row,
a contiguous piece, a window, a strided view ending on an integer index), and a view of that view, reads the
elements NumPy's view of the same subscript holds, in place, and a device function given it reads them too.
Checked on the CPU runtime against NumPy, with integer-valued float64 data so every sum is exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from translator.runtime.cpu_launch import load_cpu

SHAPE = (4, 5, 6)
VIEWS = 4  # per module: one build checks several subscripts

HEAD = '''
from numba import cuda


@cuda.jit(device=True)
def weigh1(v):
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i] * (i + 1)
    return s


@cuda.jit(device=True)
def weigh2(v):
    s = 0.0
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            s += v[i, j] * (i + 1) * (j + 7)
    return s


@cuda.jit(device=True)
def weigh3(v):
    s = 0.0
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            for k in range(v.shape[2]):
                s += v[i, j, k] * (i + 1) * (j + 7) * (k + 31)
    return s


@cuda.jit("void(float64[:, :, ::1], float64[:, ::1])")
def views(a, out):
    if cuda.grid(1) == 0:
'''


def weigh(v: np.ndarray) -> float:
    """What weigh1/2/3 compute, in the same order."""
    s = 0.0
    for idx in np.ndindex(*v.shape):
        w = [(1, 7, 31)[d] + idx[d] for d in range(v.ndim)]
        s += float(v[idx]) * float(np.prod(w))
    return s


@st.composite
def subscripts(draw):
    """A subscript of SHAPE with at least one slice: integers (negative too), step-1 slices (bounds may be
    negative or pass the extent), `:`."""
    n = draw(st.integers(1, 3))
    items = []
    for d in range(n):
        extent = SHAPE[d]
        kind = draw(st.sampled_from(["int", "slice", "full"]))
        if kind == "int":
            items.append(str(draw(st.integers(-extent, extent - 1))))  # a[:, -1] wraps, as in Python
        elif kind == "full":
            items.append(":")
        else:  # a negative bound counts from the end, as in Python (`a[:-1]`, `a[-3:]`)
            lo = draw(st.one_of(st.none(), st.integers(-extent - 1, extent - 1)))
            hi = draw(st.one_of(st.none(), st.integers(-extent + 1, extent + 2)))
            items.append(f"{'' if lo is None else lo}:{'' if hi is None else hi}")
    if all(":" not in i for i in items):
        items[draw(st.integers(0, n - 1))] = ":"
    return ", ".join(items)


@st.composite
def then(draw, ndim):
    """A second subscript of a view of NDIM dimensions: none, a row, or a slice of its first dimension."""
    return draw(st.sampled_from(["", "[0]", "[1:]", "[:-1]"] if ndim > 1 else ["", "[1:]", "[-2:]"]))


@pytest.mark.needs("g++")
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_view_reads_what_numpys_view_holds(data):
    a = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
    lines, expected = [], []
    for k in range(VIEWS):
        sub = data.draw(subscripts(), label=f"view {k}")
        view = eval(f"a[{sub}]")  # noqa: S307 - our own subscript of our own array
        if view.size == 0:
            continue
        more = data.draw(then(view.ndim), label=f"then {k}")
        view = eval(f"view{more}") if more else view  # noqa: S307
        if view.size == 0:
            continue
        name = f"v{k}"
        lines += [f"        {name} = a[{sub}]{more}",
                  f"        out[{k}, 0] = weigh{view.ndim}({name})",
                  f"        out[{k}, 1] = {name}[{', '.join(['0'] * view.ndim)}]",
                  f"        out[{k}, 2] = {name}.shape[0] * 100 + len({name})"]
        expected.append((k, [weigh(view), view[(0,) * view.ndim], view.shape[0] * 101]))
    if not lines:
        return
    module = load_cpu(source=HEAD + "\n".join(lines) + "\n")
    out = np.zeros((VIEWS, 3))
    module.views[1, 1](a, out)
    for k, want in expected:
        assert out[k].tolist() == want, (k, module.cu)
