// Stands in for CUDA's <cuda_bf16.h> when the CPU runtime compiles a translation: __nv_bfloat16 as the top 16 bits
// of a float. Conversions round as the named CUDA function does (to nearest even by default; _rz, _rd, _ru), a
// double directly (once), as __double2bfloat16 does; +, -, *, / and sqrt are computed in float and rounded once,
// which gives the correctly rounded bfloat16 result (float carries more than twice bfloat16's 8 bits). __hfma is
// computed in double (the product is exact there) and rounded once. The other math functions (hsin, hexp, ...)
// are float functions rounded to bfloat16: within an ulp of the GPU's approximations, not bit for bit.
#ifndef N2C_CPU_CUDA_BF16_H
#define N2C_CPU_CUDA_BF16_H
#ifndef N2C_CPU_RUNTIME
#error "this header is only for the numba2cuda CPU runtime (n2c_cpu.h)"
#endif

#include <cmath>
#include <cstring>
#include <limits>

#pragma GCC visibility push(hidden)
namespace n2c_bf16 {
enum Mode { RN, RZ, RD, RU };

// D rounded to the bfloat16 grid in MODE (a double: every bfloat16 is one), then as a float
inline float round_to(double d, Mode mode) {
  if (std::isnan(d) || std::isinf(d) || d == 0.0) return static_cast<float>(d);
  int k;
  std::frexp(d, &k);
  int scale = k - 8;  // 8 significant bits: d / 2^scale lies in [128, 256)
  if (scale < -133) scale = -133;  // bfloat16's subnormal step is 2^-133
  const double q = std::ldexp(d, -scale);
  double r = mode == RN ? std::nearbyint(q) : mode == RZ ? std::trunc(q) : mode == RD ? std::floor(q) : std::ceil(q);
  const double v = std::ldexp(r, scale);
  const double max = std::ldexp(255.0, 120);  // the largest finite bfloat16
  if (std::fabs(v) > max) {
    const bool up = mode == RN || (mode == RU && v > 0) || (mode == RD && v < 0);
    return static_cast<float>(up ? std::copysign(INFINITY, v) : std::copysign(max, v));
  }
  return static_cast<float>(v);
}
}  // namespace n2c_bf16

struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  explicit __nv_bfloat16(double d, n2c_bf16::Mode mode) { set(n2c_bf16::round_to(d, mode)); }
  __nv_bfloat16(float f) { set(n2c_bf16::round_to(f, n2c_bf16::RN)); }
  __nv_bfloat16(double d) { set(n2c_bf16::round_to(d, n2c_bf16::RN)); }
  __nv_bfloat16(int i) { set(n2c_bf16::round_to(i, n2c_bf16::RN)); }
  __nv_bfloat16(unsigned int i) { set(n2c_bf16::round_to(i, n2c_bf16::RN)); }
  __nv_bfloat16(long i) { set(n2c_bf16::round_to(static_cast<double>(i), n2c_bf16::RN)); }
  __nv_bfloat16(unsigned long i) { set(n2c_bf16::round_to(static_cast<double>(i), n2c_bf16::RN)); }
  __nv_bfloat16(long long i) { set(n2c_bf16::round_to(static_cast<double>(i), n2c_bf16::RN)); }
  __nv_bfloat16(unsigned long long i) { set(n2c_bf16::round_to(static_cast<double>(i), n2c_bf16::RN)); }
  __nv_bfloat16(short i) { set(n2c_bf16::round_to(i, n2c_bf16::RN)); }
  __nv_bfloat16(unsigned short i) { set(n2c_bf16::round_to(i, n2c_bf16::RN)); }
  operator float() const { unsigned int bits = static_cast<unsigned int>(__x) << 16; float f; std::memcpy(&f, &bits, 4); return f; }
  void set(float f) { unsigned int bits; std::memcpy(&bits, &f, 4); __x = static_cast<unsigned short>(bits >> 16); }
};

namespace n2c_bf16 {
inline __nv_bfloat16 make(double d) { return __nv_bfloat16(d); }
inline __nv_bfloat16 bits(unsigned short x) { __nv_bfloat16 r; r.__x = x; return r; }
inline __nv_bfloat16 sat(__nv_bfloat16 a) { const float f = a; return std::isnan(f) ? make(0.0) : make(f < 0.0f ? 0.0 : f > 1.0f ? 1.0 : f); }
// saturating, NaN to 0, as cuda_bf16.h's conversions to integers do
template <typename I> I to_int(__nv_bfloat16 a, Mode mode) {
  const double f = float(a);
  if (std::isnan(f)) return 0;
  const double r = mode == RN ? std::nearbyint(f) : mode == RZ ? std::trunc(f) : mode == RD ? std::floor(f) : std::ceil(f);
  if (r <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}
}  // namespace n2c_bf16

inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return n2c_bf16::make(float(a) + float(b)); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b) { return n2c_bf16::make(float(a) - float(b)); }
inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return n2c_bf16::make(float(a) * float(b)); }
inline __nv_bfloat16 operator/(__nv_bfloat16 a, __nv_bfloat16 b) { return n2c_bf16::make(float(a) / float(b)); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a) { return n2c_bf16::bits(static_cast<unsigned short>(a.__x ^ 0x8000u)); }
inline __nv_bfloat16 operator+(__nv_bfloat16 a) { return a; }
inline bool operator==(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) == float(b); }
inline bool operator!=(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) != float(b); }
inline bool operator<(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) < float(b); }
inline bool operator<=(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) <= float(b); }
inline bool operator>(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) > float(b); }
inline bool operator>=(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) >= float(b); }

#define N2C_BF16_BINARY(NAME, EXPR) \
  inline __nv_bfloat16 NAME(__nv_bfloat16 a, __nv_bfloat16 b) { return EXPR; }
N2C_BF16_BINARY(__hadd, a + b) N2C_BF16_BINARY(__hsub, a - b) N2C_BF16_BINARY(__hmul, a * b)
N2C_BF16_BINARY(__hdiv, a / b) N2C_BF16_BINARY(__hadd_rn, a + b) N2C_BF16_BINARY(__hsub_rn, a - b)
N2C_BF16_BINARY(__hmul_rn, a * b) N2C_BF16_BINARY(__hadd_sat, n2c_bf16::sat(a + b))
N2C_BF16_BINARY(__hsub_sat, n2c_bf16::sat(a - b)) N2C_BF16_BINARY(__hmul_sat, n2c_bf16::sat(a * b))
// NaN: __hmax/__hmin return the other operand (fmax/fmin); the _nan forms return NaN
N2C_BF16_BINARY(__hmax, n2c_bf16::make(std::fmax(float(a), float(b))))
N2C_BF16_BINARY(__hmin, n2c_bf16::make(std::fmin(float(a), float(b))))
N2C_BF16_BINARY(__hmax_nan, std::isnan(float(a)) || std::isnan(float(b)) ? n2c_bf16::make(NAN) : __hmax(a, b))
N2C_BF16_BINARY(__hmin_nan, std::isnan(float(a)) || std::isnan(float(b)) ? n2c_bf16::make(NAN) : __hmin(a, b))
#undef N2C_BF16_BINARY
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return -a; }
inline __nv_bfloat16 __habs(__nv_bfloat16 a) { return n2c_bf16::bits(static_cast<unsigned short>(a.__x & 0x7fffu)); }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return n2c_bf16::make(static_cast<double>(float(a)) * float(b) + float(c));
}
inline __nv_bfloat16 __hfma_sat(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) { return n2c_bf16::sat(__hfma(a, b, c)); }
inline __nv_bfloat16 __hfma_relu(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  const __nv_bfloat16 r = __hfma(a, b, c);
  return float(r) < 0.0f ? n2c_bf16::make(0.0) : r;
}
#define N2C_BF16_COMPARE(NAME, OP, UNORDERED) \
  inline bool NAME(__nv_bfloat16 a, __nv_bfloat16 b) { \
    return (UNORDERED && (std::isnan(float(a)) || std::isnan(float(b)))) || float(a) OP float(b); }
N2C_BF16_COMPARE(__heq, ==, false) N2C_BF16_COMPARE(__hne, !=, false) N2C_BF16_COMPARE(__hge, >=, false)
N2C_BF16_COMPARE(__hgt, >, false) N2C_BF16_COMPARE(__hle, <=, false) N2C_BF16_COMPARE(__hlt, <, false)
N2C_BF16_COMPARE(__hequ, ==, true) N2C_BF16_COMPARE(__hneu, !=, true) N2C_BF16_COMPARE(__hgeu, >=, true)
N2C_BF16_COMPARE(__hgtu, >, true) N2C_BF16_COMPARE(__hleu, <=, true) N2C_BF16_COMPARE(__hltu, <, true)
#undef N2C_BF16_COMPARE
inline bool __hisnan(__nv_bfloat16 a) { return std::isnan(float(a)); }
inline int __hisinf(__nv_bfloat16 a) { const float f = a; return std::isinf(f) ? (f > 0 ? 1 : -1) : 0; }

#define N2C_BF16_MATH(NAME, EXPR) \
  inline __nv_bfloat16 NAME(__nv_bfloat16 a) { const float x = float(a); return n2c_bf16::make(static_cast<float>(EXPR)); }
N2C_BF16_MATH(hsqrt, std::sqrt(x)) N2C_BF16_MATH(hrsqrt, 1.0 / std::sqrt(static_cast<double>(x)))
N2C_BF16_MATH(hrcp, 1.0 / static_cast<double>(x)) N2C_BF16_MATH(hsin, std::sin(x)) N2C_BF16_MATH(hcos, std::cos(x))
N2C_BF16_MATH(hexp, std::exp(x)) N2C_BF16_MATH(hexp2, std::exp2(x)) N2C_BF16_MATH(hexp10, std::pow(10.0f, x))
N2C_BF16_MATH(hlog, std::log(x)) N2C_BF16_MATH(hlog2, std::log2(x)) N2C_BF16_MATH(hlog10, std::log10(x))
N2C_BF16_MATH(htanh, std::tanh(x)) N2C_BF16_MATH(htanh_approx, std::tanh(x)) N2C_BF16_MATH(htrunc, std::trunc(x))
N2C_BF16_MATH(hceil, std::ceil(x)) N2C_BF16_MATH(hfloor, std::floor(x)) N2C_BF16_MATH(hrint, std::nearbyint(x))
#undef N2C_BF16_MATH

inline float __bfloat162float(__nv_bfloat16 a) { return float(a); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
#define N2C_BF16_FROM(WORD, T) \
  inline __nv_bfloat16 __##WORD##2bfloat16_rn(T v) { return __nv_bfloat16(static_cast<double>(v), n2c_bf16::RN); } \
  inline __nv_bfloat16 __##WORD##2bfloat16_rz(T v) { return __nv_bfloat16(static_cast<double>(v), n2c_bf16::RZ); } \
  inline __nv_bfloat16 __##WORD##2bfloat16_rd(T v) { return __nv_bfloat16(static_cast<double>(v), n2c_bf16::RD); } \
  inline __nv_bfloat16 __##WORD##2bfloat16_ru(T v) { return __nv_bfloat16(static_cast<double>(v), n2c_bf16::RU); }
N2C_BF16_FROM(float, float) N2C_BF16_FROM(int, int) N2C_BF16_FROM(uint, unsigned int) N2C_BF16_FROM(short, short)
N2C_BF16_FROM(ushort, unsigned short) N2C_BF16_FROM(ll, long long) N2C_BF16_FROM(ull, unsigned long long)
#undef N2C_BF16_FROM
#define N2C_BF16_TO(WORD, T) \
  inline T __bfloat162##WORD##_rn(__nv_bfloat16 a) { return n2c_bf16::to_int<T>(a, n2c_bf16::RN); } \
  inline T __bfloat162##WORD##_rz(__nv_bfloat16 a) { return n2c_bf16::to_int<T>(a, n2c_bf16::RZ); } \
  inline T __bfloat162##WORD##_rd(__nv_bfloat16 a) { return n2c_bf16::to_int<T>(a, n2c_bf16::RD); } \
  inline T __bfloat162##WORD##_ru(__nv_bfloat16 a) { return n2c_bf16::to_int<T>(a, n2c_bf16::RU); }
N2C_BF16_TO(int, int) N2C_BF16_TO(uint, unsigned int) N2C_BF16_TO(short, short) N2C_BF16_TO(ushort, unsigned short)
N2C_BF16_TO(ll, long long) N2C_BF16_TO(ull, unsigned long long)
#undef N2C_BF16_TO
inline signed char __bfloat162char_rz(__nv_bfloat16 a) { return n2c_bf16::to_int<signed char>(a, n2c_bf16::RZ); }
inline unsigned char __bfloat162uchar_rz(__nv_bfloat16 a) { return n2c_bf16::to_int<unsigned char>(a, n2c_bf16::RZ); }
inline short __bfloat16_as_short(__nv_bfloat16 a) { short s; std::memcpy(&s, &a.__x, 2); return s; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 a) { return a.__x; }
inline __nv_bfloat16 __short_as_bfloat16(short s) { __nv_bfloat16 r; std::memcpy(&r.__x, &s, 2); return r; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { return n2c_bf16::bits(s); }
#pragma GCC visibility pop

#endif
