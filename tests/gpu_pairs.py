"""The Numba original and numba2cuda's build of one module, side by side, for the GPU tests that compare them."""

from __future__ import annotations


def numba_and_translation(tmp_path, name: str, source: str):
    """(the module as Numba runs it, numba2cuda.load()'s module) of SOURCE written to TMP_PATH/NAME.py."""
    import numba2cuda
    from translator.userimport import import_path

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return import_path(str(path)), numba2cuda.load(path, progress=False)
