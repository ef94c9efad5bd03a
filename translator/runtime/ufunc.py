"""A translated @vectorize / @guvectorize(target="cuda") ufunc, called as Numba's: f(a, b), f(a, b, out=o).

As numba-cuda's CUDA ufunc: the loop is the signature whose types match the arrays exactly (casting='no';
scalars match their own dtype first, else any loop); scalars and arrays broadcast as NumPy's; a new output
stays on the device when any input is a device array, else comes back as a NumPy array; `out=` is written
in place; `stream=` is the launch stream. The elementwise kernels come from lower/ufuncs.py; a broadcast
scalar is read with step 0, so it is never expanded.
"""

from __future__ import annotations

import math

import numpy as np

BLOCK = 256


class NumpyBackend:
    """Arrays stay NumPy arrays: the CPU runtime's kernels take them as they are (and nothing is a device array)."""

    def is_device(self, a):
        return False

    def device(self, a):
        return np.ascontiguousarray(a)

    def empty(self, shape, dtype):
        return np.empty(shape, dtype)

    def expand(self, a, shape):
        return np.ascontiguousarray(np.broadcast_to(a, shape))

    def dtype(self, a):
        return a.dtype

    def host(self, a, into=None):
        if into is not None:
            into[...] = a.reshape(into.shape)
            return into
        return a


class TorchBackend:
    """The GPU: torch CUDA tensors and __cuda_array_interface__ objects are device arrays; NumPy arrays are copied."""

    def __init__(self):
        import torch

        self.torch = torch

    def is_device(self, a):
        return isinstance(a, self.torch.Tensor) and a.is_cuda or hasattr(a, "__cuda_array_interface__")

    def device(self, a):
        torch = self.torch
        if isinstance(a, torch.Tensor):
            return a.contiguous()
        if hasattr(a, "__cuda_array_interface__"):
            return torch.as_tensor(a, device="cuda").contiguous()
        return torch.from_numpy(np.ascontiguousarray(a)).to("cuda")

    def empty(self, shape, dtype):
        return self.torch.from_numpy(np.empty(0, dtype)).new_empty(shape, device="cuda")

    def expand(self, a, shape):
        return a.expand(shape).contiguous()

    def dtype(self, a):
        if isinstance(a, self.torch.Tensor):
            return self.torch.empty(0, dtype=a.dtype).numpy().dtype
        if hasattr(a, "__cuda_array_interface__"):
            return np.dtype(a.__cuda_array_interface__["typestr"])
        return np.asarray(a).dtype

    def host(self, a, into=None):
        self.torch.cuda.current_stream().synchronize()
        host = a.cpu().numpy()
        if into is not None:
            into[...] = host.reshape(into.shape)
            return into
        return host


def _is_scalar(a):
    return isinstance(a, (int, float, complex, np.number))


def _resolve(name, loops, dtypes, scalars):
    """numba-cuda's signature resolution: exact dtypes; scalars first by their own dtype, then as wildcards."""
    matches = []
    if scalars:
        matches = [loop for loop in loops if all(np.dtype(f) == (np.asarray(scalars[i]).dtype if d is None else d)
                                                 for i, (f, d) in enumerate(zip(loop.inputs, dtypes)))]
    if not matches:
        matches = [loop for loop in loops if all(d is None or np.dtype(f) == d for f, d in zip(loop.inputs, dtypes))]
    if not matches:
        raise TypeError(f"{name}: no matching version for {tuple(str(d) for d in dtypes)} (the GPU ufunc needs "
                        "arrays of exactly its types, as NumPy's casting='no'; loops: "
                        + ", ".join("(" + ", ".join(loop.inputs) + ")" for loop in loops) + ")")
    if len(matches) > 1:
        raise TypeError(f"{name}: ambiguous signature: too many untyped scalars; use NumPy scalars to type them")
    return matches[0]


class UFunc:
    """kernels: {kernel C name: a launchable kernel (kernel[grid, block, stream](...))}."""

    def __init__(self, info, kernels, backend=None):
        self.info = info
        self.__name__ = info.name
        self.kernels = kernels
        self.backend = backend or TorchBackend()
        self.nin = info.nin

    def __repr__(self):
        return f"<numba2cuda {self.info.kind} ufunc {self.info.name}>"

    @property
    def param_names(self):
        """The inputs, then the outputs: the argument list of `ufunc[config](*inputs, *outputs)`."""
        nout = len(self.info.core_outputs) if self.info.kind == "guvectorize" else 1
        return tuple(f"in{i}" for i in range(self.nin)) + tuple(f"out{i}" for i in range(nout))

    def __getitem__(self, config):
        """ufunc[grid, block, stream, shared](*inputs, *outputs): the kernel launch line of numba2cuda's verify and
        bench conventions (example() launches everything so). The ufunc chooses its own grid; the outputs are
        written in place, on the given stream."""
        stream = config[2] if isinstance(config, tuple) and len(config) > 2 else 0
        if self.info.kind == "guvectorize":
            return lambda *args: self(*args, stream=stream)
        return lambda *args: self(*args[:-1], out=args[-1], stream=stream)

    def __call__(self, *args, out=None, stream=0):
        if self.info.kind == "guvectorize":
            return self._gufunc(args, out, stream)
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} arguments ({len(args)} given)")
        be = self.backend
        scalars = {i: a for i, a in enumerate(args) if _is_scalar(a)}
        any_device = any(be.is_device(a) for a in args)
        arrays = {i: a if be.is_device(a) else np.asarray(a) for i, a in enumerate(args) if i not in scalars}
        dtypes = [None if i in scalars else be.dtype(arrays[i]) for i in range(len(args))]
        loop = _resolve(self.__name__, self.info.loops, dtypes, scalars)
        shapes = [tuple(arrays[i].shape) if i in arrays else (1,) for i in range(len(args))]
        shape = tuple(np.broadcast_shapes(*shapes))
        n = math.prod(shape)
        launch = []
        for i, t in enumerate(loop.inputs):
            a = be.device(np.array([scalars[i]], dtype=t)) if i in scalars else be.device(arrays[i])
            if math.prod(shapes[i]) == 1 and n != 1:
                launch += [a.reshape(1), 0]  # one value for every element: read with step 0
            else:
                launch += [(a if shapes[i] == shape else be.expand(a, shape)).reshape(-1), 1]
        host_out = None
        if out is not None and be.is_device(out):
            result = be.device(out)
        elif out is not None:  # its contents travel too: an element the kernel skips keeps its value
            host_out = out
            result = be.device(np.asarray(out))
        else:
            result = be.empty((n,), np.dtype(loop.outputs[0]))
        flat = result.reshape(-1)
        if n:
            self.kernels[loop.kernel][math.ceil(n / BLOCK), min(BLOCK, n), stream](*launch, flat)
        if out is not None and be.is_device(out):
            if result.data_ptr() != be.device(out).data_ptr():
                out.copy_(result.reshape(out.shape))
            return out
        if host_out is not None:
            written_in_place = isinstance(flat, np.ndarray) and np.shares_memory(flat, host_out)
            return host_out if written_in_place else be.host(flat, into=host_out)
        result = flat.reshape(shape)
        return result if any_device else be.host(result)

    # ------------------------------------------------------------ guvectorize
    def _gufunc(self, args, out, stream):
        info, be = self.info, self.backend
        cores = info.core_inputs + info.core_outputs
        nin, nargs = self.nin, len(cores)
        outs = list(args[nin:]) if len(args) > nin else ([out] if out is not None and nargs - nin == 1 else
                                                         list(out or []))
        if len(args[:nin]) != nin or len(outs) not in (0, nargs - nin):
            raise TypeError(f"{self.__name__}() takes {nin} inputs and optionally its {nargs - nin} outputs")
        any_device = any(be.is_device(a) for a in args)
        ins = [a if be.is_device(a) else np.asarray(a) for a in args[:nin]]
        dtypes = [be.dtype(a) for a in ins]
        loop = _resolve(self.__name__, info.loops, dtypes, {})
        sizes, outer = {}, []
        for a, dims in zip(ins, info.core_inputs):
            core = tuple(a.shape[len(a.shape) - len(dims):]) if dims else ()
            for d, n in zip(dims, core):
                if sizes.setdefault(d, n) != n:
                    raise ValueError(f"{self.__name__}(): core dimension {d} is {sizes[d]} and {n}")
            outer.append(tuple(a.shape[:len(a.shape) - len(dims)]))
        loopdims = tuple(np.broadcast_shapes(*outer)) if outer else ()
        n = math.prod(loopdims)
        launch = []
        for a, dims, o in zip(ins, info.core_inputs, outer):
            core = tuple(a.shape[len(a.shape) - len(dims):]) if dims else ()
            d = be.device(a)
            if o != loopdims:
                d = be.expand(d, loopdims + core)
            launch.append(d.reshape((n,) + core) if core else d.reshape(n))
        results = []
        for k, (dims, t) in enumerate(zip(info.core_outputs, loop.outputs)):
            core = tuple(sizes[d] for d in dims)
            given = outs[k] if outs else None
            results.append(be.device(given) if given is not None and be.is_device(given) else
                           be.empty(loopdims + core, np.dtype(t)))
            launch.append(results[-1].reshape((n,) + core) if core else results[-1].reshape(n))
        if n:
            self.kernels[loop.kernel][math.ceil(n / BLOCK), min(BLOCK, n), stream](*launch)
        final = []
        for k, r in enumerate(results):
            given = outs[k] if outs else None
            if given is not None and not be.is_device(given):
                final.append(be.host(r, into=given))
            elif given is not None:
                final.append(given)
            else:
                final.append(r if any_device else be.host(r))
        return final[0] if len(final) == 1 else tuple(final)
