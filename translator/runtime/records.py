"""Record arrays (numba.cuda.random's xoroshiro128p states, a user's structured dtypes) <-> the uint64 words or
bytes torch can hold.

torch has no structured dtypes, so a translated kernel takes a record array as a tensor with one more
dimension: the uint64 words of each RNG state (a state array of n generators is n x 2), the bytes of each
other record (n x itemsize, uint8); the memory is the same, so Numba's records and the translation's are one
buffer. NumPy arrays are viewed, never copied.
"""

from __future__ import annotations

import numpy as np

from .launch_checks import memory_order

WORD = np.dtype(np.uint64)


def is_record_array(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.names is not None


def unit_of(dtype: np.dtype) -> np.dtype:
    """What torch holds a record as: uint64 words for numba.cuda.random's states (records of uint64 fields), bytes
    for any other record (a user's structured dtype)."""
    if dtype.itemsize % WORD.itemsize == 0 and all(dtype.fields[n][0] == WORD for n in dtype.names):
        return WORD
    return np.dtype(np.uint8)


def as_words(a: np.ndarray) -> np.ndarray:
    """A record array viewed as its words or bytes (unit_of), shape + (units per record,): C-contiguous, a view of
    A where A is."""
    unit = unit_of(a.dtype)
    flat = np.ascontiguousarray(a).reshape(-1)  # 1-D: NumPy views a 0-d array only as a dtype of its size
    return flat.view(unit).reshape(a.shape + (a.dtype.itemsize // unit.itemsize,))


def from_words(words: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Words back as records of LIKE's dtype and shape."""
    return np.ascontiguousarray(words).view(like.dtype).reshape(like.shape)


def to_torch(a, device):
    """A NumPy argument as the tensor a translated kernel takes (records as their words)."""
    import torch

    if is_record_array(a):
        return torch.from_numpy(as_words(a)).to(device)
    return torch.from_numpy(np.require(a, requirements=memory_order(a))).to(device)  # a column-major one stays so


def numba_view(tensor, dtype: np.dtype):
    """A Numba device array of records over the words in TENSOR (no copy): the Numba original's argument.

    Built from the words' own interface and given the record dtype afterwards: numba-cuda's
    from_cuda_array_interface reads only `typestr` ("|V16"), not `descr`, and cannot type a record from it
    (NumbaNotImplementedError, measured with numba-cuda 0.30.4 on the H200)."""
    from numba import cuda
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    shape = tuple(tensor.shape[:-1])
    strides = tuple(int(np.prod(shape[k + 1:], dtype=np.int64)) * dtype.itemsize for k in range(len(shape)))
    words = cuda.as_cuda_array(tensor)  # its memory pointer keeps TENSOR alive
    return DeviceNDArray(shape=shape, strides=strides, dtype=dtype, gpu_data=words.gpu_data)
