"""this machine -> the CUDA toolkit to build with, or one message naming what is missing.

The one copy of this search: numba2cuda's builds use it (toolchain.cuda_home), and `numba2cuda package` writes
this file verbatim into the generated project as `_cuda_home.py`, which its setup.py runs before torch's
builder guesses (torch takes the nvcc on PATH at face value, so a wrapper script in /usr/local/bin makes it
look for the toolkit in /usr/local). So it imports only the standard library.

Order: $CUDA_HOME, then $CUDA_PATH, when it holds bin/nvcc; the toolkit of the nvcc on PATH (following
symlinks and one-line wrapper scripts such as `exec /usr/local/cuda-13.0/bin/nvcc "$@"`); torch's default,
/usr/local/cuda.
"""

import os
import re
import shutil

DEFAULT_HOME = "/usr/local/cuda"


class CudaNotFound(RuntimeError):
    """No CUDA toolkit (nvcc) anywhere this search looks; the message names each place."""


def is_nvcc(path) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def nvcc_behind_wrapper(path):
    """The real nvcc a small wrapper script execs (``exec /usr/local/cuda-13.0/bin/nvcc "$@"``), or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None  # a binary: it is the real thing
    for word in re.findall(rb"""[^\s'"]+/bin/nvcc\b""", head):
        candidate = os.path.realpath(word.decode(errors="replace"))
        if candidate != os.path.realpath(path) and is_nvcc(candidate):
            return candidate
    return None


def find_cuda_home(env_home=None, env_path=None, path_var=None):
    """The toolkit folder (holding bin/nvcc); raises CudaNotFound. Arguments: $CUDA_HOME, $CUDA_PATH and $PATH
    (each read from the environment when None)."""
    env_home = os.environ.get("CUDA_HOME") if env_home is None else env_home
    env_path = os.environ.get("CUDA_PATH") if env_path is None else env_path
    path_var = os.environ.get("PATH", "") if path_var is None else path_var
    for home in (env_home, env_path):
        if home and is_nvcc(os.path.join(home, "bin", "nvcc")):
            return os.path.abspath(home)
    which = shutil.which("nvcc", path=path_var)
    if which:
        real = nvcc_behind_wrapper(which) or os.path.realpath(which)
        return os.path.dirname(os.path.dirname(real))
    if is_nvcc(os.path.join(DEFAULT_HOME, "bin", "nvcc")):
        return DEFAULT_HOME
    looked = [f"$CUDA_HOME={env_home} has no bin/nvcc" if env_home else "$CUDA_HOME is not set"]
    if env_path:
        looked.append(f"$CUDA_PATH={env_path} has no bin/nvcc")
    looked += ["no nvcc on PATH", f"no {DEFAULT_HOME}/bin/nvcc"]
    raise CudaNotFound("cannot find the CUDA toolkit (nvcc): " + ", ".join(looked) + "\n    hint: install the "
                       "CUDA toolkit (its nvcc must match torch's CUDA major version) and put its bin/ on PATH, or "
                       "set CUDA_HOME to it")
