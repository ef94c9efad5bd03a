// n2c helpers: Python and Numba semantics that plain C operators do not have.
// The translator copies only the sections a kernel uses (between "// @helper NAME" lines).

// @helper floordiv
// Python's // on integers rounds toward minus infinity; C's / truncates. Like Numba
// (NumPy error model), x // 0 is 0 and MIN // -1 is 0.
template <typename T>
__device__ __forceinline__ T floordiv(T a, T b)
{
    if (b == 0)
        return 0;
    if (T(-1) < T(0) && b == T(-1)) {
        // negate in unsigned arithmetic: -MIN overflows, and Numba returns 0 for it
        T negated = T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
        return (a < 0 && negated < 0) ? T(0) : negated;
    }
    T q = a / b;
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

// @helper mod
// Python's % on integers takes the sign of the divisor; x % 0 is 0 as in Numba.
template <typename T>
__device__ __forceinline__ T mod(T a, T b)
{
    if (b == 0 || (T(-1) < T(0) && b == T(-1)))
        return 0;
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// @helper float_divmod
// Python's float // and %, as CPython (and Numba) compute them from fmod.
template <typename T>
__device__ __forceinline__ T float_mod(T a, T b)
{
    if (b == T(0))
        return fmod(a, b);
    T m = fmod(a, b);
    if (m != T(0)) {
        if ((b < T(0)) != (m < T(0)))
            m += b;
    } else {
        m = copysign(T(0), b);
    }
    return m;
}

template <typename T>
__device__ __forceinline__ T float_floordiv(T a, T b)
{
    if (b == T(0))
        return a / b;
    T m = fmod(a, b);
    T div = (a - m) / b;
    if (m != T(0) && ((b < T(0)) != (m < T(0))))
        div -= T(1);
    if (div != T(0)) {
        T f = floor(div);
        if (div - f > T(0.5))
            f += T(1);
        return f;
    }
    return copysign(T(0), a / b);
}

// @helper ipow
// x ** n for an integer n by repeated squaring, the same products Numba computes.
template <typename T, typename E>
__device__ __forceinline__ T ipow(T base, E exp)
{
    bool invert = exp < 0;
    uint64_t e = invert ? uint64_t(0) - uint64_t(exp) : uint64_t(exp);
    if (invert && T(0.5) == T(0)) // integer base with a negative exponent
        return (base == 1) ? 1 : (base == T(-1) ? ((e & 1) ? T(-1) : T(1)) : 0);
    T result = 1;
    while (e != 0) {
        if (e & 1)
            result *= base;
        e >>= 1;
        base *= base;
    }
    return invert ? T(1) / result : result;
}

// @helper pow_int
// math.pow(x, n) of a float32 or float64 and an int32: numba-cuda calls libdevice's powif and powi, which
// the GCC branch of CUDA's headers does not declare. The CPU runtime (no libdevice) converts n, as Numba's
// CPU target would.
#if defined(__CUDACC__)
extern "C" __device__ float powif(float, int);
extern "C" __device__ double powi(double, int);
#endif
template <typename T>
__device__ __forceinline__ T pow_int(T x, int n)
{
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) == 4)
        return powif(x, n);
    else
        return powi(x, n);
#else
    return std::pow(x, T(n));  // float: powf
#endif
}

// @helper wrap
// Numba wraps a negative index around the dimension, as Python does (a[-1] is the last element).
__device__ __forceinline__ int64_t wrap(int64_t index, int64_t extent)
{
    return index < 0 ? index + extent : index;
}

// @helper range_len
// The number of iterations of range(start, stop, step), evaluated once like Python's range.
__device__ __forceinline__ int64_t range_len(int64_t start, int64_t stop, int64_t step)
{
    if (step > 0)
        return start < stop ? (stop - start - 1) / step + 1 : 0;
    return start > stop ? (start - stop - 1) / (-step) + 1 : 0;
}

// @helper laneid
// cuda.laneid: the lane of this thread in its warp (warps are formed from the linear thread index).
__device__ __forceinline__ int laneid()
{
    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & (warpSize - 1);
}

// @helper lanemask_lt
__device__ __forceinline__ unsigned int lanemask_lt()
{
    return (1u << ((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31)) - 1u;
}

// @helper degrees
template <typename T>
__device__ __forceinline__ T degrees(T x)
{
    return x * (T(180.0) / T(3.141592653589793));
}

// @helper radians
template <typename T>
__device__ __forceinline__ T radians(T x)
{
    return x * (T(3.141592653589793) / T(180.0));
}

// @helper py_minmax
// Python's min/max: the first argument wins ties and NaN comparisons, as Numba's select does.
template <typename T>
__device__ __forceinline__ T py_min(T a, T b)
{
    return b < a ? b : a;
}
template <typename T>
__device__ __forceinline__ T py_max(T a, T b)
{
    return b > a ? b : a;
}

// @helper array_minmax
// min(a) / max(a) of a 1-D array (a view's step: its elements lie that far apart), as numba-cuda's iterable_min
// and iterable_max compute them: the first element, then each later one that compares less (greater), so a NaN
// after the first is passed over and a NaN first is the result. An empty array, where Numba raises ValueError
// and the thread stops, gives zero here.
template <typename T>
__device__ __forceinline__ T array_min(const T *a, int64_t n, int64_t step = 1)
{
    if (n <= 0)
        return T();
    T m = a[0];
    for (int64_t i = 1; i < n; ++i)
        if (a[i * step] < m)
            m = a[i * step];
    return m;
}
template <typename T>
__device__ __forceinline__ T array_max(const T *a, int64_t n, int64_t step = 1)
{
    if (n <= 0)
        return T();
    T m = a[0];
    for (int64_t i = 1; i < n; ++i)
        if (a[i * step] > m)
            m = a[i * step];
    return m;
}

// @helper array_reduce
// NumPy's reductions of an array as numba-cuda's arraymath computes them: element by element in C order (a view's
// step: its elements lie that far apart), accumulating in the type R numba-cuda's typing gives (int64 for
// integers and bools, the array's own type for floats); mean and var divide in float64, np.min and np.max
// return the first NaN they meet, np.nanmin and np.nanmax pass NaNs over. Where Numba raises ValueError (the
// min or max of an empty array) and the thread stops, the result here is zero.
template <typename R, bool Product, bool SkipNan, typename T>
__device__ __forceinline__ R array_fold(const T *a, int64_t n, int64_t step)
{
    R c = R(Product ? 1 : 0);
    for (int64_t i = 0; i < n; ++i) {
        T v = a[i * step];
        if (!(SkipNan && v != v))
            c = Product ? c * (R)v : c + (R)v;
    }
    return c;
}
template <typename R, typename T>
__device__ __forceinline__ R array_sum(const T *a, int64_t n, int64_t step = 1) { return array_fold<R, false, false>(a, n, step); }
template <typename R, typename T>
__device__ __forceinline__ R array_prod(const T *a, int64_t n, int64_t step = 1) { return array_fold<R, true, false>(a, n, step); }
template <typename R, typename T>
__device__ __forceinline__ R array_nansum(const T *a, int64_t n, int64_t step = 1) { return array_fold<R, false, true>(a, n, step); }
template <typename R, typename T>
__device__ __forceinline__ R array_nanprod(const T *a, int64_t n, int64_t step = 1) { return array_fold<R, true, true>(a, n, step); }
// A: the accumulator (float64 for integers and bools, the array's own type for floats)
template <typename A, typename T>
__device__ __forceinline__ double array_mean(const T *a, int64_t n, int64_t step = 1)
{
    return (double)array_fold<A, false, false>(a, n, step) / (double)n;
}
// the mean of the squared differences from M, summed in double (numba-cuda's var and, NaNs skipped, nanvar)
template <bool SkipNan, typename T>
__device__ __forceinline__ double mean_square_from(const T *a, int64_t n, int64_t step, double m)
{
    double ssd = 0.0;
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (SkipNan && a[i * step] != a[i * step])
            continue;
        const double val = (double)a[i * step] - m;
        ssd += val * val;
        count += 1;
    }
    return ssd / (double)count;
}
template <typename A, typename T>
__device__ __forceinline__ double array_var(const T *a, int64_t n, int64_t step = 1)
{
    return mean_square_from<false>(a, n, step, array_mean<A>(a, n, step));
}
template <typename T>
__device__ __forceinline__ double array_nanmean(const T *a, int64_t n, int64_t step = 1)
{
    double c = 0.0;
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i)
        if (!(a[i * step] != a[i * step])) {
            c += (double)a[i * step];
            count += 1;
        }
    return c / (double)count;
}
// np.nanvar (np.nanstd is its ** 0.5): numba-cuda's nanvar_impl, about the NaN-free mean
template <typename T>
__device__ __forceinline__ double array_nanvar(const T *a, int64_t n, int64_t step = 1)
{
    return mean_square_from<true>(a, n, step, array_nanmean(a, n, step));
}
// np.argmax/np.argmin (numba-cuda's array_argmax_impl_float and _generic): the index of the first extreme in C
// order, of a float array the first NaN's; an empty array gives 0, where Numba raises ValueError
template <bool Max, typename T>
__device__ __forceinline__ int64_t array_argextreme(const T *a, int64_t n, int64_t step)
{
    if (n <= 0)
        return 0;
    T r = a[0];
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
        const T v = a[i * step];
        if (v != v)  // a NaN (never true of an integer)
            return i;
        if (Max ? v > r : v < r) {
            r = v;
            at = i;
        }
    }
    return at;
}
template <typename T>
__device__ __forceinline__ int64_t array_argmax(const T *a, int64_t n, int64_t step = 1) { return array_argextreme<true>(a, n, step); }
template <typename T>
__device__ __forceinline__ int64_t array_argmin(const T *a, int64_t n, int64_t step = 1) { return array_argextreme<false>(a, n, step); }
// np.min/np.max (NanFirst: the first NaN met is the result; Max: > instead of <), np.nanmin/np.nanmax (NaNs
// passed over, a later equal value taken, as numba-cuda's `if not r < v: r = v`); numba-cuda compiles them only
// with its runtime (NRT) on
template <bool Max, bool NanFirst, typename T>
__device__ __forceinline__ T array_extreme(const T *a, int64_t n, int64_t step)
{
    if (n <= 0)
        return T();
    T r = a[0];
    if (NanFirst && r != r)
        return r;
    for (int64_t i = 1; i < n; ++i) {
        T v = a[i * step];
        if (NanFirst && v != v)
            return v;
        if (NanFirst ? (Max ? v > r : v < r) : (!(v != v) && !(Max ? r > v : r < v)))
            r = v;
    }
    return r;
}
template <typename T>
__device__ __forceinline__ T array_npmin(const T *a, int64_t n, int64_t step = 1) { return array_extreme<false, true>(a, n, step); }
template <typename T>
__device__ __forceinline__ T array_npmax(const T *a, int64_t n, int64_t step = 1) { return array_extreme<true, true>(a, n, step); }
template <typename T>
__device__ __forceinline__ T array_nanmin(const T *a, int64_t n, int64_t step = 1) { return array_extreme<false, false>(a, n, step); }
template <typename T>
__device__ __forceinline__ T array_nanmax(const T *a, int64_t n, int64_t step = 1) { return array_extreme<true, false>(a, n, step); }
// count_nonzero, all, any: Kind 0 counts the elements that are not zero, 1 is whether all are, 2 whether any is
template <int Kind, typename T>
__device__ __forceinline__ int64_t array_truth(const T *a, int64_t n, int64_t step)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; ++i) {
        bool nonzero = a[i * step] != 0;
        if (Kind == 1 && !nonzero)
            return 0;
        if (Kind == 2 && nonzero)
            return 1;
        c += nonzero;
    }
    return Kind == 1 ? 1 : Kind == 2 ? 0 : c;
}
template <typename T>
__device__ __forceinline__ int64_t array_count_nonzero(const T *a, int64_t n, int64_t step = 1) { return array_truth<0>(a, n, step); }
template <typename T>
__device__ __forceinline__ bool array_all(const T *a, int64_t n, int64_t step = 1) { return array_truth<1>(a, n, step); }
template <typename T>
__device__ __forceinline__ bool array_any(const T *a, int64_t n, int64_t step = 1) { return array_truth<2>(a, n, step); }

// @helper slice_bound
// A slice bound that may be negative (`a[:-1]`, `a[b[k]:b[k + 1]]`), as Python takes it: a negative one counts
// from the end, and one still before the start is the start, or for a negative step one before it. (One past the
// end is clipped where the length is computed.)
__device__ __forceinline__ int64_t slice_bound(int64_t bound, int64_t extent, int64_t step = 1)
{
    if (bound >= 0)
        return bound;
    bound += extent;
    return bound >= 0 ? bound : (step < 0 ? -1 : 0);
}

// @helper slice_len
// The length of a[start:stop] (step 1, bounds not negative): Python clips the stop at the extent, and a slice
// that starts at or past its stop is empty.
__device__ __forceinline__ int64_t slice_len(int64_t start, int64_t stop, int64_t extent)
{
    stop = stop < extent ? stop : extent;
    return stop > start ? stop - start : 0;
}

// @helper slice_step
// a[start:stop:step] of a constant step other than 1 (bounds not negative; a missing stop of a negative step is
// -1, before the first element): Python clips the start and the stop into the extent, and counts the elements
// from the start towards the stop.
__device__ __forceinline__ int64_t slice_start(int64_t start, int64_t step, int64_t extent)
{
    int64_t last = step > 0 ? extent : extent - 1;
    return start < last ? start : last;
}

__device__ __forceinline__ int64_t slice_count(int64_t start, int64_t stop, int64_t step, int64_t extent)
{
    start = slice_start(start, step, extent);
    stop = slice_start(stop, step, extent);
    if (step > 0)
        return stop > start ? (stop - start + step - 1) / step : 0;
    return start > stop ? (start - stop - step - 1) / -step : 0;
}

// @helper py_abs
// abs() of an integer in its own type, as Numba computes it: an unsigned one is itself, abs(int8(-128)) is -128.
template <typename T>
__device__ __forceinline__ T py_abs(T x)
{
    if constexpr (std::is_unsigned<T>::value)
        return x;
    else
        return x < 0 ? T(-x) : x;
}

// @helper py_round
// Python's round(x) rounds half to even and returns an int (an int64 in Numba, of an integer too).
template <typename T>
__device__ __forceinline__ int64_t py_round(T x)
{
    if constexpr (std::is_integral<T>::value)
        return (int64_t)x;  // rint of an integer (a bool too) is a host-only overload under nvcc
    else
        return (int64_t)rint(x);
}

// @helper round_ndigits
// round(x, ndigits) as numba-cuda computes it (CPython's fallback double_round): scaled by powers of ten in
// float64, rounded half to even, scaled back; the result in x's type.
template <typename T>
__device__ __forceinline__ T round_ndigits(T xin, int64_t ndigits)
{
    const double x = xin;
    if (isinf(x) || isnan(x))
        return xin;
    double pow1, pow2 = 1.0, y;
    if (ndigits >= 0) {
        if (ndigits > 22) {
            pow1 = ipow(10.0, ndigits - 22);
            pow2 = 1e22;
        } else {
            pow1 = ipow(10.0, ndigits);
        }
        y = (x * pow1) * pow2;
        if (isinf(y))
            return xin;
    } else {
        pow1 = ipow(10.0, -ndigits);
        y = x / pow1;
    }
    double z = (double)py_round(y);
    if (fabs(y - z) == 0.5)
        z = 2.0 * (double)py_round(y / 2.0);
    if (ndigits >= 0)
        z = (z / pow2) / pow1;
    else
        z *= pow1;
    return (T)z;
}

// @helper exit_thread
// A raise (or a failed assert) in a device function: Numba returns an exception status, which every caller, the
// kernel too, returns on in turn (without debug=True nothing reads it), so the thread ends there. PTX's exit ends
// it at once, wherever the call chain is.
[[noreturn]] __device__ __forceinline__ void exit_thread()
{
#if defined(__CUDA_ARCH__)
    asm volatile("exit;");
    __builtin_unreachable();
#elif defined(N2C_CPU_RUNTIME)
    n2c_cpu_exit_thread();
#else
    __builtin_trap();
#endif
}

// @helper dynamic_smem_bytes
// Size of the dynamic shared memory of this launch: Numba sizes dynamic shared arrays from it.
__device__ __forceinline__ unsigned int dynamic_smem_bytes()
{
#if defined(__CUDA_ARCH__)
    unsigned int bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
#elif defined(N2C_CPU_RUNTIME)
    return n2c_cpu_dynamic_smem_size();
#else
    return 0;
#endif
}

// @helper atomic_add
// CUDA's atomicAdd has no int64_t/uint64_t overloads; two's complement makes the
// unsigned long long one identical for both.
template <typename T, typename V>
__device__ __forceinline__ T atomic_add(T *p, V value)
{
    const T v = T(value);
    if constexpr (sizeof(T) == 8 && T(0.5) == T(0))
        return (T)atomicAdd((unsigned long long *)p, (unsigned long long)v);
    else
        return atomicAdd(p, v);
}

// @helper atomic_sub
template <typename T, typename V>
__device__ __forceinline__ T atomic_sub(T *p, V value)
{
    const T v = T(value);
    if constexpr (T(0.5) != T(0))
        return atomicAdd(p, -v);
    else if constexpr (sizeof(T) == 8)
        return (T)atomicAdd((unsigned long long *)p, 0ull - (unsigned long long)v);
    else
        return atomicSub(p, v);
}

// @helper atomic_cas_bits
// Compare-and-swap on the bits of a 32- or 64-bit value, for the float atomics below.
__device__ __forceinline__ float atomic_cas_bits(float *p, float expected, float desired)
{
    return __int_as_float(atomicCAS((int *)p, __float_as_int(expected), __float_as_int(desired)));
}
__device__ __forceinline__ double atomic_cas_bits(double *p, double expected, double desired)
{
    return __longlong_as_double((long long)atomicCAS((unsigned long long *)p,
        (unsigned long long)__double_as_longlong(expected), (unsigned long long)__double_as_longlong(desired)));
}

// @helper atomic_max
// Numba's float max/min: a NaN on either side leaves memory alone; returns the value first read.
template <typename T, typename V>
__device__ __forceinline__ T atomic_max(T *p, V value)
{
    const T v = T(value);
    if constexpr (T(0.5) == T(0)) {
        if constexpr (sizeof(T) == 8 && T(-1) < T(0))
            return (T)atomicMax((long long *)p, (long long)v);
        else if constexpr (sizeof(T) == 8)
            return (T)atomicMax((unsigned long long *)p, (unsigned long long)v);
        else
            return atomicMax(p, v);
    } else {
        T first = *(volatile T *)p;
        if (isnan(v) || isnan(first))
            return first;
        for (T old = first; old < v;)
            old = atomic_cas_bits(p, old, v);
        return first;
    }
}
template <typename T, typename V>
__device__ __forceinline__ T atomic_nanmax(T *p, V value)
{
    if constexpr (std::is_integral<T>::value)
        return atomic_max(p, value);  // an integer has no NaN: numba-cuda's nanmax of one is max
    else {
        const T v = T(value);
        T first = *(volatile T *)p;
        if (isnan(v))
            return first;
        for (T old = first; old < v || isnan(old);)
            old = atomic_cas_bits(p, old, v);
        return first;
    }
}

// @helper atomic_min
template <typename T, typename V>
__device__ __forceinline__ T atomic_min(T *p, V value)
{
    const T v = T(value);
    if constexpr (T(0.5) == T(0)) {
        if constexpr (sizeof(T) == 8 && T(-1) < T(0))
            return (T)atomicMin((long long *)p, (long long)v);
        else if constexpr (sizeof(T) == 8)
            return (T)atomicMin((unsigned long long *)p, (unsigned long long)v);
        else
            return atomicMin(p, v);
    } else {
        T first = *(volatile T *)p;
        if (isnan(v) || isnan(first))
            return first;
        for (T old = first; old > v;)
            old = atomic_cas_bits(p, old, v);
        return first;
    }
}
template <typename T, typename V>
__device__ __forceinline__ T atomic_nanmin(T *p, V value)
{
    if constexpr (std::is_integral<T>::value)
        return atomic_min(p, value);  // an integer has no NaN: numba-cuda's nanmin of one is min
    else {
        const T v = T(value);
        T first = *(volatile T *)p;
        if (isnan(v))
            return first;
        for (T old = first; old > v || isnan(old);)
            old = atomic_cas_bits(p, old, v);
        return first;
    }
}

// @helper atomic_bits
template <typename T, typename V>
__device__ __forceinline__ T atomic_and(T *p, V value)
{
    const T v = T(value);
    if constexpr (sizeof(T) == 8)
        return (T)atomicAnd((unsigned long long *)p, (unsigned long long)v);
    else
        return atomicAnd(p, v);
}
template <typename T, typename V>
__device__ __forceinline__ T atomic_or(T *p, V value)
{
    const T v = T(value);
    if constexpr (sizeof(T) == 8)
        return (T)atomicOr((unsigned long long *)p, (unsigned long long)v);
    else
        return atomicOr(p, v);
}
template <typename T, typename V>
__device__ __forceinline__ T atomic_xor(T *p, V value)
{
    const T v = T(value);
    if constexpr (sizeof(T) == 8)
        return (T)atomicXor((unsigned long long *)p, (unsigned long long)v);
    else
        return atomicXor(p, v);
}

// @helper atomic_exch
template <typename T, typename V>
__device__ __forceinline__ T atomic_exch(T *p, V value)
{
    const T v = T(value);
    if constexpr (sizeof(T) == 8 && T(0.5) == T(0))
        return (T)atomicExch((unsigned long long *)p, (unsigned long long)v);
    else if constexpr (sizeof(T) == 8)
        return __longlong_as_double((long long)atomicExch((unsigned long long *)p,
                                                          (unsigned long long)__double_as_longlong(v)));
    else
        return atomicExch(p, v);
}

// @helper atomic_inc
// CUDA's wrapping increment/decrement: inc gives ((old >= v) ? 0 : old + 1).
__device__ __forceinline__ unsigned int atomic_inc(unsigned int *p, unsigned int v) { return atomicInc(p, v); }
__device__ __forceinline__ unsigned int atomic_dec(unsigned int *p, unsigned int v) { return atomicDec(p, v); }
__device__ __forceinline__ uint64_t atomic_inc(uint64_t *p, unsigned long long v)
{
    unsigned long long *q = (unsigned long long *)p, old = *q, seen;
    do {
        seen = old;
        old = atomicCAS(q, seen, seen >= v ? 0ull : seen + 1);
    } while (old != seen);
    return old;
}
__device__ __forceinline__ uint64_t atomic_dec(uint64_t *p, unsigned long long v)
{
    unsigned long long *q = (unsigned long long *)p, old = *q, seen;
    do {
        seen = old;
        old = atomicCAS(q, seen, (seen == 0 || seen > v) ? (unsigned long long)v : seen - 1);
    } while (old != seen);
    return old;
}

// @helper atomic_cas
template <typename T, typename V, typename W>
__device__ __forceinline__ T atomic_cas(T *p, V expected_value, W desired_value)
{
    const T expected = T(expected_value), desired = T(desired_value);
    if constexpr (sizeof(T) == 8)
        return (T)atomicCAS((unsigned long long *)p, (unsigned long long)expected, (unsigned long long)desired);
    else if constexpr (sizeof(T) == 4)
        return (T)atomicCAS((unsigned int *)p, (unsigned int)expected, (unsigned int)desired);
    else
        return (T)atomicCAS((unsigned short *)p, (unsigned short)expected, (unsigned short)desired);
}

// @helper np_ufuncs
// NumPy's element functions as Numba implements them: maximum/minimum return a NaN operand (the first when
// both are), fmax/fmin the other one; ties keep the first operand, so -0.0 and 0.0 stay as Numba orders them.
template <typename T>
__device__ __forceinline__ T np_maximum(T a, T b)
{
    if (a != a || b != b)
        return a != a ? a : b;
    return a >= b ? a : b;
}
template <typename T>
__device__ __forceinline__ T np_minimum(T a, T b)
{
    if (a != a || b != b)
        return a != a ? a : b;
    return a <= b ? a : b;
}
template <typename T>
__device__ __forceinline__ T np_fmax(T a, T b)
{
    if (a != a || b != b)
        return b != b ? a : b;
    return a >= b ? a : b;
}
template <typename T>
__device__ __forceinline__ T np_fmin(T a, T b)
{
    if (a != a || b != b)
        return b != b ? a : b;
    return a <= b ? a : b;
}
template <typename T>
__device__ __forceinline__ T np_square(T a)
{
    return a * a;
}
template <typename T>
__device__ __forceinline__ T np_negative(T a)
{
    return T(-a);
}
template <typename T>
__device__ __forceinline__ T np_absolute(T a)
{
    if constexpr (std::is_floating_point<T>::value)
        return sizeof(T) == 4 ? T(fabsf(float(a))) : T(fabs(double(a)));
    else
        return a < T(0) ? T(-a) : a;
}
// sign: -1, 0 or 1 of the same type; NaN stays NaN
template <typename T>
__device__ __forceinline__ T np_sign(T a)
{
    return a > T(0) ? T(1) : (a < T(0) ? T(-1) : (a == T(0) ? T(0) : a));
}

// comparisons, logical and bitwise ufuncs on the operands NumPy's loop converted them to (a bool loop's invert
// is logical not, as NumPy's ~ of a bool)
#define N2C_NP_BINARY(NAME, R, EXPR)                                                                    \
    template <typename T>                                                                               \
    __device__ __forceinline__ R np_##NAME(T a, T b) { return EXPR; }
N2C_NP_BINARY(greater, bool, a > b) N2C_NP_BINARY(greater_equal, bool, a >= b)
N2C_NP_BINARY(less, bool, a < b) N2C_NP_BINARY(less_equal, bool, a <= b)
N2C_NP_BINARY(equal, bool, a == b) N2C_NP_BINARY(not_equal, bool, a != b)
N2C_NP_BINARY(logical_and, bool, a != T(0) && b != T(0)) N2C_NP_BINARY(logical_or, bool, a != T(0) || b != T(0))
N2C_NP_BINARY(logical_xor, bool, (a != T(0)) != (b != T(0)))
N2C_NP_BINARY(bitwise_and, T, T(a & b)) N2C_NP_BINARY(bitwise_or, T, T(a | b)) N2C_NP_BINARY(bitwise_xor, T, T(a ^ b))
N2C_NP_BINARY(left_shift, T, T(a << b)) N2C_NP_BINARY(right_shift, T, T(a >> b))
#undef N2C_NP_BINARY
template <typename T>
__device__ __forceinline__ bool np_logical_not(T a)
{
    return a == T(0);
}
template <typename T>
__device__ __forceinline__ T np_invert(T a)
{
    if constexpr (std::is_same<T, bool>::value)
        return !a;
    else
        return T(~a);
}

// @helper modf
// math.modf(x) returns (fractional part, integral part) as Numba's tuple; C's modf writes the second through a
// pointer.
struct modf_result {
    double v0;
    double v1;
};
struct modff_result {
    float v0;
    float v1;
};
__device__ __forceinline__ modf_result modf(double x)
{
    modf_result r;
    r.v0 = ::modf(x, &r.v1);
    return r;
}
__device__ __forceinline__ modff_result modff(float x)
{
    modff_result r;
    r.v0 = ::modff(x, &r.v1);
    return r;
}

// @helper sincos
// numba.cuda.libdevice.sincos(f) returns (sin x, cos x) as Numba's tuple; CUDA's sincos(f) writes through pointers.
struct sincosf_result {
    float v0;
    float v1;
};
struct sincos_result {
    double v0;
    double v1;
};
__device__ __forceinline__ sincosf_result sincosf(float x)
{
    sincosf_result r;
    ::sincosf(x, &r.v0, &r.v1);
    return r;
}
__device__ __forceinline__ sincos_result sincos(double x)
{
    sincos_result r;
    ::sincos(x, &r.v0, &r.v1);
    return r;
}

// @helper frexp
// numba.cuda.libdevice.frexp(x) returns (mantissa, exponent) as Numba's tuple; CUDA's frexp writes the exponent
// through a pointer.
struct frexpf_result {
    float v0;
    int v1;
};
struct frexp_result {
    double v0;
    int v1;
};
__device__ __forceinline__ frexpf_result frexpf(float x)
{
    frexpf_result r;
    r.v0 = ::frexpf(x, &r.v1);
    return r;
}
__device__ __forceinline__ frexp_result frexp(double x)
{
    frexp_result r;
    r.v0 = ::frexp(x, &r.v1);
    return r;
}

// @helper sad
// numba.cuda.libdevice.sad/usad: |x - y| + z, every argument and the result int32 as libdevice declares them
__device__ __forceinline__ int sad(int x, int y, int z)
{
    return (int)__sad(x, y, (unsigned int)z);
}
__device__ __forceinline__ int usad(int x, int y, int z)
{
    return (int)__usad((unsigned int)x, (unsigned int)y, (unsigned int)z);
}

// @helper match_all
// cuda.match_all_sync returns (mask, pred) as Numba's tuple: the mask of lanes holding the same value when all
// of them do (else 0), and whether they all do.
struct match_all_result {
    int v0;
    bool v1;
};
template <typename T>
__device__ __forceinline__ match_all_result match_all_sync(unsigned int mask, T value)
{
    int pred;
    const unsigned int same = __match_all_sync(mask, value, &pred);
    return {(int)same, pred != 0};
}

// @helper xoroshiro128p
// numba.cuda.random, step for step: xoroshiro128+ over the state layout create_xoroshiro128p_states makes (two
// uint64 per generator), so a state array from Numba is drawn from in place and gives Numba's numbers.
struct xoroshiro128p_state {
    uint64_t s0;
    uint64_t s1;
};
__device__ __forceinline__ uint64_t xoroshiro128p_rotl(uint64_t x, uint32_t k)
{
    return (x << k) | (x >> (64u - k));
}
__device__ __forceinline__ uint64_t xoroshiro128p_next(xoroshiro128p_state *state)
{
    const uint64_t s0 = state->s0;
    uint64_t s1 = state->s1;
    const uint64_t result = s0 + s1;
    s1 ^= s0;
    state->s0 = xoroshiro128p_rotl(s0, 55u) ^ s1 ^ (s1 << 14u);
    state->s1 = xoroshiro128p_rotl(s1, 36u);
    return result;
}
// the top 53 bits as a double in [0, 1); the float32 draw rounds that double (so it can round up to 1.0f)
__device__ __forceinline__ double xoroshiro128p_uniform_float64(xoroshiro128p_state *state)
{
    return (double)(xoroshiro128p_next(state) >> 11u) * (1.0 / 9007199254740992.0);
}
__device__ __forceinline__ float xoroshiro128p_uniform_float32(xoroshiro128p_state *state)
{
    return (float)xoroshiro128p_uniform_float64(state);
}
// Box-Muller from two float32 draws, the second value discarded, as numba-cuda does (its float64 normal
// also draws float32 uniforms and takes a float32 log)
__device__ __forceinline__ float xoroshiro128p_normal_float32(xoroshiro128p_state *state)
{
    const float u1 = xoroshiro128p_uniform_float32(state);
    const float u2 = xoroshiro128p_uniform_float32(state);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831855f * u2);
}
__device__ __forceinline__ double xoroshiro128p_normal_float64(xoroshiro128p_state *state)
{
    const float u1 = xoroshiro128p_uniform_float32(state);
    const float u2 = xoroshiro128p_uniform_float32(state);
    return sqrt(-2.0 * (double)logf(u1)) * cos(6.283185307179586 * (double)u2);
}
// advance by 2**64 draws
__device__ __forceinline__ void xoroshiro128p_jump(xoroshiro128p_state *state)
{
    const uint64_t jump[2] = {0xBEAC0467EBA5FACBull, 0xD86B048B86AA9922ull};
    uint64_t s0 = 0, s1 = 0;
    for (int i = 0; i < 2; ++i)
        for (uint32_t b = 0; b < 64u; ++b) {
            if (jump[i] & (1ull << b)) {
                s0 ^= state->s0;
                s1 ^= state->s1;
            }
            xoroshiro128p_next(state);
        }
    state->s0 = s0;
    state->s1 = s1;
}
// SplitMix64 of the seed, as init_xoroshiro128p_state
__device__ __forceinline__ void init_xoroshiro128p_state(xoroshiro128p_state *state, uint64_t seed)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30u)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27u)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31u);
    state->s0 = z;
    state->s1 = z;
}

// @helper complex
// complex64/complex128 as Numba computes them: (a+bi)(c+di) = (ac - bd) + (ad + bc)i with all four products,
// CPython's division (a zero divisor gives NaN + NaNj; Numba would end the thread with ZeroDivisionError),
// abs() = hypot(re, im). A real operand is made complex first (imaginary part 0), as Numba converts it.
// float arguments call the float function, as Numba's typing does (no overload resolution to trust)
#define N2C_MATH1(NAME)                                                                                 \
    __device__ __forceinline__ float m_##NAME(float x) { return NAME##f(x); }                          \
    __device__ __forceinline__ double m_##NAME(double x) { return NAME(x); }
#define N2C_MATH2(NAME)                                                                                 \
    __device__ __forceinline__ float m_##NAME(float x, float y) { return NAME##f(x, y); }              \
    __device__ __forceinline__ double m_##NAME(double x, double y) { return NAME(x, y); }
N2C_MATH1(cos) N2C_MATH1(sin) N2C_MATH1(tan) N2C_MATH1(exp) N2C_MATH1(log) N2C_MATH1(fabs)
N2C_MATH1(cosh) N2C_MATH1(sinh) N2C_MATH1(tanh) N2C_MATH1(sqrt)
N2C_MATH2(hypot) N2C_MATH2(atan2) N2C_MATH2(copysign)
#undef N2C_MATH1
#undef N2C_MATH2
struct __align__(8) complex64 {
    float re, im;
    complex64() = default;
    __host__ __device__ constexpr complex64(float r, float i = 0.0f) : re(r), im(i) {}
    __host__ __device__ explicit complex64(const struct complex128 &z);
};
struct __align__(16) complex128 {
    double re, im;
    complex128() = default;
    __host__ __device__ constexpr complex128(double r, double i = 0.0) : re(r), im(i) {}
    __host__ __device__ constexpr complex128(const complex64 &z) : re(z.re), im(z.im) {}
};
__host__ __device__ inline complex64::complex64(const complex128 &z) : re((float)z.re), im((float)z.im) {}

template <typename C, typename R>
__device__ __forceinline__ C complex_mul(C x, C y)
{
    const R ac = x.re * y.re, bd = x.im * y.im, ad = x.re * y.im, bc = x.im * y.re;
    return C(ac - bd, ad + bc);
}
template <typename C, typename R>
__device__ __forceinline__ C complex_div(C x, C y)
{
    const R areal = x.re, aimag = x.im, breal = y.re, bimag = y.im;
    if (m_fabs(breal) >= m_fabs(bimag)) {
        if (breal == R(0))
            return C(R(NAN), R(NAN));
        const R ratio = bimag / breal;
        const R denom = breal + bimag * ratio;
        return C((areal + aimag * ratio) / denom, (aimag - areal * ratio) / denom);
    }
    if (bimag == R(0))
        return C(R(NAN), R(NAN));
    const R ratio = breal / bimag;
    const R denom = breal * ratio + bimag;
    return C((areal * ratio + aimag) / denom, (aimag * ratio - areal) / denom);
}
#define N2C_COMPLEX_OPS(C, R)                                                                          \
    __device__ __forceinline__ C operator+(C x, C y) { return C(x.re + y.re, x.im + y.im); }             \
    __device__ __forceinline__ C operator-(C x, C y) { return C(x.re - y.re, x.im - y.im); }             \
    __device__ __forceinline__ C operator*(C x, C y) { return complex_mul<C, R>(x, y); }                 \
    __device__ __forceinline__ C operator/(C x, C y) { return complex_div<C, R>(x, y); }                 \
    __device__ __forceinline__ C operator-(C x) { return C(-x.re, -x.im); }                              \
    __device__ __forceinline__ C operator+(C x) { return x; }                                           \
    __device__ __forceinline__ C &operator+=(C &x, C y) { return x = x + y; }                            \
    __device__ __forceinline__ C &operator-=(C &x, C y) { return x = x - y; }                            \
    __device__ __forceinline__ C &operator*=(C &x, C y) { return x = x * y; }                            \
    __device__ __forceinline__ C &operator/=(C &x, C y) { return x = x / y; }                            \
    __device__ __forceinline__ bool operator==(C x, C y) { return x.re == y.re && x.im == y.im; }        \
    __device__ __forceinline__ bool operator!=(C x, C y) { return x.re != y.re || x.im != y.im; }        \
    __device__ __forceinline__ C conj(C x) { return C(x.re, -x.im); }                                    \
    __device__ __forceinline__ R cabs(C x) { return m_hypot(x.re, x.im); }                                 \
    __device__ __forceinline__ bool cisnan(C x) { return ::isnan(x.re) || ::isnan(x.im); }                \
    __device__ __forceinline__ bool cisinf(C x) { return ::isinf(x.re) || ::isinf(x.im); }                \
    __device__ __forceinline__ bool cisfinite(C x) { return ::isfinite(x.re) && ::isfinite(x.im); }
N2C_COMPLEX_OPS(complex64, float)
N2C_COMPLEX_OPS(complex128, double)
#undef N2C_COMPLEX_OPS

// @helper complex_part
// the parts of an element in place: cuda.atomic.add(z.real, i, v) adds to the real part of z[i]
__host__ __device__ inline float *real_part(complex64 *z) { return &z->re; }
__host__ __device__ inline double *real_part(complex128 *z) { return &z->re; }
__host__ __device__ inline float *imag_part(complex64 *z) { return &z->im; }
__host__ __device__ inline double *imag_part(complex128 *z) { return &z->im; }

// @helper cpow
// z ** w as numba-cuda's cpow_implement computes it (CPython's _Py_c_pow, every step in C's precision), the
// result as its last line builds it: length * (complex(cos) + complex(sin) * 1j), all four products each time
__device__ __forceinline__ float m_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double m_pow(double x, double y) { return pow(x, y); }
template <typename C>
__device__ __forceinline__ C cpow(C a, C b)
{
    typedef decltype(a.re) R;
    if (b.re == R(0) && b.im == R(0))
        return C(R(1), R(0));
    if (a.re == R(0) && b.re == R(0))
        return C(R(0), R(0));
    const R vabs = m_hypot(a.re, a.im);
    R len = m_pow(vabs, b.re);
    const R at = m_atan2(a.im, a.re);
    R phase = at * b.re;
    if (b.im != R(0)) {
        len /= m_exp(at * b.im);
        phase += b.im * m_log(vabs);
    }
    return C(len) * (C(m_cos(phase)) + C(m_sin(phase)) * C(R(0), R(1)));
}

// @helper cmath
// cmath as numba-cuda implements it, each step in the precision Numba's typing gives it: exp, log, sqrt,
// phase, polar, rect, sinh, cosh, sin, cos in the argument's precision (sqrt's main path in double: Numba
// unifies its scaled parts with a float64), tanh in part in double (its float64 constants), sin/cos/tan through
// sinh/cosh/tanh of complex(-im, re); tanh, tan's tanh and log10 give complex128, as Numba's versions return.
template <typename C>
__device__ __forceinline__ C cexp(C z)
{
    typedef decltype(z.re) R;
    const R x = z.re, y = z.im;
    if (::isfinite(x)) {
        if (::isfinite(y)) {
            const R c = m_cos(y), s = m_sin(y), r = m_exp(x);
            return C(r * c, r * s);
        }
        return C(R(NAN), R(NAN));
    }
    if (::isnan(x))
        return y != R(0) ? C(x, x) : C(x, y);
    if (x > R(0)) {
        if (::isfinite(y)) {
            R real = m_cos(y), imag = m_sin(y);
            if (real != R(0))
                real *= x;
            if (imag != R(0))
                imag *= x;
            return C(real, imag);
        }
        return C(x, R(NAN));
    }
    if (::isfinite(y)) {
        const R r = m_exp(x), c = m_cos(y), s = m_sin(y);
        return C(r * c, r * s);
    }
    return C(R(0), R(0));
}
template <typename C>
__device__ __forceinline__ C clog(C z)
{
    return C(m_log(m_hypot(z.re, z.im)), m_atan2(z.im, z.re));
}
template <typename C>
__device__ __forceinline__ C clog_base(C z, C base)
{
    return clog(z) / clog(base);  // Numba's cmath.log(z, base), with its complex division
}
template <typename C>
__device__ __forceinline__ complex128 clog10(C z)
{
    const C w = clog(z);
    return complex128(w.re / 2.302585092994045684, w.im / 2.302585092994045684);
}
template <typename C>
__device__ __forceinline__ auto phase(C z)
{
    return m_atan2(z.im, z.re);
}
template <typename C>
struct polar_result {
    decltype(C().re) v0, v1;
};
template <typename C>
__device__ __forceinline__ polar_result<C> polar(C z)
{
    return {m_hypot(z.re, z.im), m_atan2(z.im, z.re)};
}
// complex64 when both are float32 (complex(float32, float32) is complex64 in Numba), else complex128
template <typename R, typename P>
__device__ __forceinline__ auto rect(R r, P phi)
{
    typedef decltype(r * phi) U;
    typedef typename std::conditional<sizeof(U) == 4, complex64, complex128>::type C;
    if (!::isfinite(phi)) {
        if (r == R(0))
            return C(m_fabs(r));
        if (::isinf(r))
            return C(r, phi);
    }
    const P c = m_cos(phi), s = m_sin(phi);
    const U real = (c == P(0) && ::isinf(r)) ? U(c) / r : U(c) * r;
    const U imag = (s == P(0) && ::isinf(r)) ? U(s) / r : U(s) * r;
    return C(real, imag);
}
template <typename C>
__device__ __forceinline__ C csqrt(C z)
{
    typedef decltype(z.re) R;
    // above this a component is scaled by 1/4 first; NumPy's algorithm (npy_csqrt), as numba-cuda's
    const double thres = (sizeof(R) == 4 ? 3.4028234663852886e38 : 1.7976931348623157e308) / 2.414213562373095;
    const R a0 = z.re, b0 = z.im;
    if (a0 == R(0) && b0 == R(0))
        return C(m_fabs(b0), b0);
    if (::isinf(b0))
        return C(m_fabs(b0), b0);
    if (::isnan(a0))
        return C(a0, a0);
    if (::isinf(a0))
        return a0 < R(0) ? C(m_fabs(b0 - b0), m_copysign(a0, b0)) : C(a0, m_copysign(b0 - b0, b0));
    double a = a0, b = b0;
    const bool scale = m_fabs(a0) >= thres || m_fabs(b0) >= thres;
    if (scale) {
        a = (double)a0 * 0.25;
        b = (double)b0 * 0.25;
    }
    double real, imag;
    if (a >= 0) {
        const double t = sqrt((a + m_hypot(a, b)) * 0.5);
        real = t;
        imag = b / (2 * t);
    } else {
        const double t = sqrt((-a + m_hypot(a, b)) * 0.5);
        real = m_fabs(b) / (2 * t);
        imag = m_copysign(t, b);
    }
    return scale ? C(complex128(real * 2, imag)) : C(complex128(real, imag));
}
template <typename C>
__device__ __forceinline__ C ccosh(C z)
{
    typedef decltype(z.re) R;
    const R x = z.re, y = z.im;
    if (::isinf(x)) {
        R real, imag;
        if (::isnan(y) || y == R(0)) {
            real = m_fabs(x);
            imag = y;
        } else {
            real = m_copysign(x, m_cos(y));
            imag = m_copysign(x, m_sin(y));
        }
        if (x < R(0))
            imag = -imag;
        return C(real, imag);
    }
    return C(m_cos(y) * m_cosh(x), m_sin(y) * m_sinh(x));
}
template <typename C>
__device__ __forceinline__ C csinh(C z)
{
    typedef decltype(z.re) R;
    const R x = z.re, y = z.im;
    if (::isinf(x)) {
        if (::isnan(y))
            return C(x, y);
        R real = m_cos(y), imag = m_sin(y);
        if (real != R(0))
            real *= x;
        if (imag != R(0))
            imag *= m_fabs(x);
        return C(real, imag);
    }
    return C(m_cos(y) * m_sinh(x), m_sin(y) * m_cosh(x));
}
template <typename C>
__device__ __forceinline__ complex128 ctanh(C z)
{
    typedef decltype(z.re) R;
    const R x = z.re, y = z.im;
    if (::isinf(x)) {
        const double real = m_copysign(1.0, (double)x);
        const double imag = ::isinf(y) ? 0.0 : m_copysign(0.0, m_sin(2.0 * (double)y));
        return complex128(real, imag);
    }
    const R tx = m_tanh(x), ty = m_tan(y);
    const double cx = 1.0 / (double)m_cosh(x);
    const R txty = tx * ty;
    const double denom = 1.0 + (double)(txty * txty);
    return complex128((double)tx * (1.0 + (double)(ty * ty)) / denom, (((double)ty / denom) * cx) * cx);
}
// sin(z) = -j sinh(jz), cos(z) = cosh(jz), tan(z) = -j tanh(jz), through complex(-z.imag, z.real)
template <typename C>
__device__ __forceinline__ C csin(C z)
{
    const C r = csinh(C(-z.im, z.re));
    return C(r.im, -r.re);
}
template <typename C>
__device__ __forceinline__ C ccos(C z)
{
    return ccosh(C(-z.im, z.re));
}
template <typename C>
__device__ __forceinline__ C ctan(C z)
{
    const complex128 r = ctanh(C(-z.im, z.re));
    return C(complex128(r.im, -r.re));
}
// The inverse functions are CPython's algorithms as numba-cuda writes them in Python: its literals (0.5, 1.0, LN_4)
// are float64, so a complex64 argument's parts are computed in double, a float32 part is used alone only where
// Numba's code does (atan2 of two parts, sqrt of |imag|), and the result is rounded once to the argument's type;
// acosh is an @overload whose body builds complex128, so it returns complex128 for either argument.
// FLT_MAX / 4, numba's threshold for every precision
#define N2C_CMATH_LARGE(z) ((double)m_fabs((z).re) > 0x1.fffffep+125 || (double)m_fabs((z).im) > 0x1.fffffep+125)
template <typename C>
__device__ __forceinline__ C cacos(C z)
{
    const double ln4 = 1.3862943611198906;
    if (N2C_CMATH_LARGE(z)) {
        const double imag = copysign(log(hypot(z.re * 0.5, z.im * 0.5)) + ln4, (double)-z.im);
        return C(complex128(m_atan2(m_fabs(z.im), z.re), imag));
    }
    const complex128 s1 = csqrt(complex128(1.0 - z.re, -z.im)), s2 = csqrt(complex128(1.0 + z.re, z.im));
    return C(complex128(2.0 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re)));
}
template <typename C>
__device__ __forceinline__ complex128 cacosh(C z)
{
    const double ln4 = 1.3862943611198906;
    if (N2C_CMATH_LARGE(z))
        return complex128(log(hypot(z.re * 0.5, z.im * 0.5)) + ln4, m_atan2(z.im, z.re));
    const complex128 s1 = csqrt(complex128(z.re - 1.0, z.im)), s2 = csqrt(complex128(z.re + 1.0, z.im));
    return complex128(asinh(s1.re * s2.re + s1.im * s2.im), 2.0 * atan2(s1.im, s2.re));
}
template <typename C>
__device__ __forceinline__ C casinh(C z)
{
    const double ln4 = 1.3862943611198906;
    if (N2C_CMATH_LARGE(z))
        return C(complex128(copysign(log(hypot(z.re * 0.5, z.im * 0.5)) + ln4, (double)z.re),
                            m_atan2(z.im, m_fabs(z.re))));
    const complex128 s1 = csqrt(complex128(1.0 + z.im, -z.re)), s2 = csqrt(complex128(1.0 - z.im, z.re));
    return C(complex128(asinh(s1.re * s2.im - s2.re * s1.im), atan2((double)z.im, s1.re * s2.re - s1.im * s2.im)));
}
template <typename C>
__device__ __forceinline__ C casin(C z)
{
    const C r = casinh(C(-z.im, z.re));
    return C(r.im, -r.re);
}
template <typename C>
__device__ __forceinline__ C catanh(C z)
{
    typedef decltype(z.re) R;
    // sqrt(FLT_MAX / 4) and sqrt(FLT_MIN), computed in double by numba's Python
    const double large = 0x1.fffffeffffffcp+62, small = 0x1p-63, pi_12 = 1.5707963267948966;
    const bool negate = z.re < R(0);
    if (negate)
        z = -z;
    const R ay = m_fabs(z.im);
    double real, imag;
    if (::isnan(z.re) || (double)z.re > large || (double)ay > large) {
        if (::isinf(z.im))
            real = copysign(0.0, (double)z.re);
        else if (::isinf(z.re))
            real = 0.0;
        else {
            const double h = hypot(z.re * 0.5, z.im * 0.5);
            real = z.re / 4.0 / h / h;
        }
        imag = -copysign(pi_12, (double)-z.im);
    } else if (z.re == R(1) && (double)ay < small) {
        if (ay == R(0)) {
            real = INFINITY;
            imag = z.im;
        } else {
            real = -log((double)m_sqrt(ay) / sqrt(hypot((double)ay, 2.0)));
            imag = copysign(atan2(2.0, (double)-ay) / 2, (double)z.im);
        }
    } else {
        const R sqay = ay * ay;
        const double zr1 = 1 - (double)z.re;
        real = log1p(4.0 * z.re / (zr1 * zr1 + sqay)) * 0.25;
        imag = -atan2(-2.0 * z.im, zr1 * (1 + (double)z.re) - sqay) * 0.5;
    }
    if (::isnan(z.im))
        imag = NAN;
    return negate ? C(complex128(-real, -imag)) : C(complex128(real, imag));
}
template <typename C>
__device__ __forceinline__ C catan(C z)
{
    const C r = catanh(C(-z.im, z.re));
    if (::isinf(z.re) && ::isnan(z.im))
        return C(r.im, r.re);  // numba-cuda's own special case ("this is odd but necessary")
    return C(r.im, -r.re);
}
#undef N2C_CMATH_LARGE

// @helper fp16
// float16 is CUDA's __half (<cuda_fp16.h>): its operators and the cuda.fp16 functions are cuda_fp16.h's own.

// @helper fp8
// fp8_e5m2, fp8_e4m3 and fp8_e8m0 are CUDA's __nv_fp8_e5m2, __nv_fp8_e4m3 and __nv_fp8_e8m0 (<cuda_fp8.h>): their
// constructors and conversion operators are cuda_fp8.h's own, which numba-cuda binds (numba.cuda._internal.cuda_fp8).
// Its conversion functions take cuda_fp8.h's enums, which numba-cuda passes as the integers of saturation_t,
// fp8_interpretation_t and cudaRoundMode.
#define N2C_FP8_CVT(NAME, FROM, ENUM) \
    __device__ __forceinline__ unsigned char NAME(FROM x, int sat, int e) \
    { return __nv_##NAME(x, (__nv_saturation_t)sat, (ENUM)e); }
N2C_FP8_CVT(cvt_float_to_fp8, float, __nv_fp8_interpretation_t)
N2C_FP8_CVT(cvt_double_to_fp8, double, __nv_fp8_interpretation_t)
N2C_FP8_CVT(cvt_bfloat16raw_to_fp8, __nv_bfloat16_raw, __nv_fp8_interpretation_t)
N2C_FP8_CVT(cvt_float_to_e8m0, float, cudaRoundMode)
N2C_FP8_CVT(cvt_double_to_e8m0, double, cudaRoundMode)
N2C_FP8_CVT(cvt_bfloat16raw_to_e8m0, __nv_bfloat16_raw, cudaRoundMode)
#undef N2C_FP8_CVT

// @helper bf16
// bfloat16 is CUDA's __nv_bfloat16 (<cuda_bf16.h>): its operators and the cuda.bf16 functions are cuda_bf16.h's own,
// which numba-cuda binds.
