# expect: 4:2: @jit: names 'jit', which this module never imports or defines (Python stops here with a NameError)
"""A notebook cell saved as a module without the cell that imported jit (numba's or numba.cuda's: not told)."""

@jit
def cuda_histogram(x, xmin, xmax, histogram_out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.add(histogram_out, int((x[i] - xmin) / (xmax - xmin) * histogram_out.shape[0]), 1)
