# expect: 11:5: call to block_load(): 'block_load' is computed when the module runs (by a call)
"""Calls a primitive a library builds when the module runs (cuda.coop's block load)."""
from numba import cuda
import cuda.coop as coop

block_load = coop.block.load("uint8", 128, 4, "striped")


@cuda.jit("void(uint8[::1], uint8[:, ::1])")
def load(values, items):
    block_load(values, items[cuda.grid(1)])
