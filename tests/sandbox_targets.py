"""Functions the sandbox tests run in a child (tests/test_sandbox.py): each stands for something a translation
may do to the process that runs it."""

import ctypes
import os
import time


def echo(args, arrays):
    return {"args": args, "pid": os.getpid(), "env": sorted(os.environ)}, [a * 2 for a in arrays]


def segfault(args, arrays):
    ctypes.string_at(0)


def abort(args, arrays):
    os.abort()


def spin(args, arrays):
    while True:
        pass


def sleep(args, arrays):
    time.sleep(3600)


def raise_error(args, arrays):
    raise ValueError("bad argument")


def print_then_return(args, arrays):
    print("hello from the child")
    ctypes.CDLL(None).printf(b"printf from C\n")
    return {"ok": True}, []


def allocate(args, arrays):
    return {"n": len(bytearray(args["bytes"]))}, []


def forge_answer(args, arrays):
    """Code in the child writes its own answer: an object array (a pickle) where an array is expected."""
    import sys

    import numpy as np

    from translator import sandbox

    frame = sandbox.encode({"result": {"forged": True}}, [np.arange(3)])
    payload = np.array([{"x": 1}], dtype=object)
    import io
    buf = io.BytesIO()
    np.save(buf, payload, allow_pickle=True)
    head = frame[: frame.index(b"\x93NUMPY") - 8]
    sandbox.write_all(int(sys.argv[2]), head + sandbox._HEADER.pack(len(buf.getvalue())) + buf.getvalue())
    os._exit(0)
