// Stands in for CUDA's <cuda_fp16.h> when the CPU runtime compiles a translation: __half as the host
// compiler's _Float16 (IEEE binary16). Conversions round to nearest even, a double directly (once), as
// __float2half_rn and __double2half do; +, -, *, /, sqrt and fma are computed wider and rounded once to half,
// which gives the correctly rounded half result the GPU's half instructions give (float and double carry
// more than twice half's precision). The other functions (hsin, hexp, ...) are float functions rounded to
// half: within an ulp of the GPU's approximations, not bit for bit.
#ifndef N2C_CPU_CUDA_FP16_H
#define N2C_CPU_CUDA_FP16_H
#ifndef N2C_CPU_RUNTIME
#error "this header is only for the numba2cuda CPU runtime (n2c_cpu.h)"
#endif

#include <cmath>
#include <cstring>

// The bits, as CUDA's own __half holds them (a by-value __half is passed like an unsigned short); arithmetic
// goes through _Float16.
struct __half {
  unsigned short __x;
  __half() = default;
  __half(float f) { set(static_cast<_Float16>(f)); }
  __half(double d) { set(static_cast<_Float16>(d)); }
  __half(int i) { set(static_cast<_Float16>(static_cast<double>(i))); }
  __half(long long i) { set(static_cast<_Float16>(static_cast<double>(i))); }
  operator float() const { return static_cast<float>(get()); }
  _Float16 get() const { _Float16 h; std::memcpy(&h, &__x, 2); return h; }
  void set(_Float16 h) { std::memcpy(&__x, &h, 2); }
};

#pragma GCC visibility push(hidden)
namespace n2c_fp16 {
inline __half make(float f) { return __half(f); }
inline __half make(double d) { return __half(d); }
}  // namespace n2c_fp16

inline __half operator+(__half a, __half b) { return n2c_fp16::make(float(a) + float(b)); }
inline __half operator-(__half a, __half b) { return n2c_fp16::make(float(a) - float(b)); }
inline __half operator*(__half a, __half b) { return n2c_fp16::make(float(a) * float(b)); }
inline __half operator/(__half a, __half b) { return n2c_fp16::make(float(a) / float(b)); }
inline __half operator-(__half a) { __half r; r.__x = static_cast<unsigned short>(a.__x ^ 0x8000u); return r; }
inline __half operator+(__half a) { return a; }
inline __half &operator+=(__half &a, __half b) { return a = a + b; }
inline __half &operator-=(__half &a, __half b) { return a = a - b; }
inline __half &operator*=(__half &a, __half b) { return a = a * b; }
inline __half &operator/=(__half &a, __half b) { return a = a / b; }
inline bool operator==(__half a, __half b) { return float(a) == float(b); }
inline bool operator!=(__half a, __half b) { return float(a) != float(b); }
inline bool operator<(__half a, __half b) { return float(a) < float(b); }
inline bool operator<=(__half a, __half b) { return float(a) <= float(b); }
inline bool operator>(__half a, __half b) { return float(a) > float(b); }
inline bool operator>=(__half a, __half b) { return float(a) >= float(b); }

inline float __half2float(__half a) { return float(a); }
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double d) { return __half(d); }
inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hsub(__half a, __half b) { return a - b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half __hdiv(__half a, __half b) { return a / b; }
inline __half __hneg(__half a) { return -a; }
inline __half __habs(__half a) { __half r; r.__x = static_cast<unsigned short>(a.__x & 0x7fffu); return r; }
inline __half __hfma(__half a, __half b, __half c) {
  return n2c_fp16::make(static_cast<double>(float(a)) * float(b) + float(c));  // the product is exact in double
}
// NaN: __hmax/__hmin return the other operand (fmax/fmin), as cuda_fp16.h documents
inline __half __hmax(__half a, __half b) { return n2c_fp16::make(std::fmax(float(a), float(b))); }
inline __half __hmin(__half a, __half b) { return n2c_fp16::make(std::fmin(float(a), float(b))); }
inline bool __heq(__half a, __half b) { return a == b; }
inline bool __hne(__half a, __half b) { return a != b; }
inline bool __hgt(__half a, __half b) { return a > b; }
inline bool __hge(__half a, __half b) { return a >= b; }
inline bool __hlt(__half a, __half b) { return a < b; }
inline bool __hle(__half a, __half b) { return a <= b; }
#define N2C_FP16_MATH(NAME, EXPR) \
  inline __half NAME(__half a) { const float x = float(a); return n2c_fp16::make(static_cast<float>(EXPR)); }
N2C_FP16_MATH(hsqrt, std::sqrt(x)) N2C_FP16_MATH(hrsqrt, 1.0 / std::sqrt(static_cast<double>(x)))
N2C_FP16_MATH(hrcp, 1.0 / static_cast<double>(x)) N2C_FP16_MATH(hsin, std::sin(x)) N2C_FP16_MATH(hcos, std::cos(x))
N2C_FP16_MATH(hexp, std::exp(x)) N2C_FP16_MATH(hexp2, std::exp2(x)) N2C_FP16_MATH(hexp10, std::pow(10.0f, x))
N2C_FP16_MATH(hlog, std::log(x)) N2C_FP16_MATH(hlog2, std::log2(x)) N2C_FP16_MATH(hlog10, std::log10(x))
N2C_FP16_MATH(htanh, std::tanh(x)) N2C_FP16_MATH(hceil, std::ceil(x)) N2C_FP16_MATH(hfloor, std::floor(x))
N2C_FP16_MATH(htrunc, std::trunc(x)) N2C_FP16_MATH(hrint, std::rint(x))
#undef N2C_FP16_MATH
#pragma GCC visibility pop

#endif  // N2C_CPU_CUDA_FP16_H
