// n2c_cpu.h -- run the CUDA C that numba2cuda emits on the CPU, faithfully.
//
//   g++ -std=c++17 -O1 -x c++ -include n2c_cpu.h kernel.cu -shared -fPIC -o lib.so
//   (translator/cpurun.py adds flags that make it stricter; see CXXFLAGS there)
//
// This is the CPU tier of the equivalence checker: where CUDA leaves behaviour undefined we
// *report* it (deadlock, divergent barrier, mismatched warp collective, write past the dynamic
// shared memory) or make it *visible* (poisoned shared memory) rather than pick a value that
// happens to work.
//
// Model
//  * Blocks run one after another on the calling OS thread; the threads of a block are fibers
//    switched only at barriers, warp collectives and exit.  Between those points a thread runs
//    alone, so a plain read-modify-write is atomic and execution is sequentially consistent.
//  * __shared__ is `thread_local`: a block-scope thread_local is static, so each kernel has one
//    copy per OS thread -- per block, since a thread runs one block at a time -- and launches
//    from several Python threads do not collide.
//  * Poison: before every block the whole PT_TLS segment of this .so -- which holds nothing but
//    __shared__ storage and one runtime pointer (restored) -- is filled with the poison byte
//    (default 0xFF: NaN floats, -1 ints), found via dl_iterate_phdr's dlpi_tls_data (glibc).
//    n2c_cpu_static_poison_supported() reports whether that worked; if not, only the dynamic
//    buffer is poisoned.  (Without -fno-ipa-reference-addressable, which cpurun.py passes, g++
//    folds loads from a __shared__ array that is never stored to into zeros.)  The top 8 KiB of each fiber stack (local arrays) is poisoned once per
//    launch, so later blocks see what the previous block left there.
//  * Warps: lanes are consecutive linear thread ids (x fastest) in groups of 32.  A collective
//    waits until every non-exited lane named in its mask waits at a collective; they must agree
//    on the operation and the live mask, else the launch fails.  A shuffle whose source lane is
//    outside that group (not in the mask, exited, past the block) returns the caller's OWN
//    value, like an out-of-range shfl_up/down.
//  * __syncthreads completes when every non-exited thread waits at a barrier (exited threads
//    never block it, as on sm_70+); all must wait at the same source line and form, otherwise
//    the launch fails as a divergent barrier (UB in CUDA).
//  * Deadlock: completion is checked eagerly on every arrival and exit, so a scheduler pass
//    that finds nothing runnable while threads are alive is a deadlock: the launch returns
//    cudaErrorLaunchFailure and n2c_cpu_last_error_message() says who waits where.
//  * Checked builds (-DN2C_CPU_CHECKED with g++'s -fsanitize=thread hooks, what `numba2cuda
//    verify` runs): every access of the kernel code is checked against the arrays it may touch, data
//    races are found with shadow memory per barrier interval, and a block's threads run in a varied
//    order (n2c_cpu_check.h).
//  * Not modelled: spin-waits on another thread or block (they hang: fibers are not preempted),
//    memory ordering, more than ~500 KiB of stack per thread (SIGSEGV on a guard page), the static +
//    dynamic shared limit (dynamic only), `extern __shared__` under any name but n2c_dynamic_smem,
//    texture, cooperative groups other than this_grid().sync(); without checks (and in cooperative
//    launches, checks or not), data races and out-of-bounds global accesses.
//  * Cooperative launches (cudaLaunchCooperativeKernel): every block runs at once, each on its own OS
//    thread with its own fibers and its own __shared__ (thread_local), so a grid barrier can complete.
//    A block arrives at this_grid().sync() when all its live threads wait there; all blocks leave
//    together.  A block that ends while others wait there is a deadlock (the GPU would hang), reported.
#ifndef N2C_CPU_H
#define N2C_CPU_H
#define N2C_CPU_RUNTIME 1

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#ifdef N2C_CPU_CHECKED
#include <csignal>
#include <unistd.h>
#endif
#if !defined(__x86_64__) || defined(N2C_CPU_UCONTEXT)
#define N2C_CPU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

// CUDA provides these unqualified in device code; libstdc++ only in std::.
using std::isfinite;
using std::isinf;
using std::isnan;
using std::signbit;

// ---- CUDA qualifiers -------------------------------------------------------------------------
// Kernels are hidden so their function-scope __shared__ statics are local symbols, never
// STB_GNU_UNIQUE (which would merge one kernel's shared arrays across every loaded .so).
#define __global__ __attribute__((visibility("hidden")))
#define __device__
#define __host__
#define __constant__
#ifdef N2C_CPU_CHECKED  // verifier checks: each __shared__ array on its own page (n2c_cpu_check.h)
#define __shared__ __attribute__((aligned(4096))) thread_local
#else
#define __shared__ thread_local
#endif
#define __forceinline__ __inline__ __attribute__((always_inline))
// After the standard headers on purpose: libstdc++ spells __attribute__((__noinline__)).
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __maxnreg__(...)

// ---- host-side types -------------------------------------------------------------------------
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorLaunchFailure = 719,
  cudaErrorCooperativeLaunchTooLarge = 720,
};
typedef enum cudaError cudaError_t;
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
typedef void *cudaStream_t;
static constexpr int warpSize = 32;

// Everything below is internal to one .so (many kernels' .so may be loaded at once).  The types
// above stay default-visible: a type's visibility caps that of an extern "C" launcher using it.
#pragma GCC visibility push(hidden)

// Dynamic shared memory: every kernel names this buffer with `extern __shared__`.
// 227 KiB is the sm_90 opt-in maximum; the headroom past it catches stray writes.
#define N2C_CPU_DYN_SMEM_MAX 232448u
#define N2C_CPU_DYN_SMEM_BUF (N2C_CPU_DYN_SMEM_MAX + 16384u)
#ifdef N2C_CPU_CHECKED
alignas(4096) thread_local unsigned char n2c_dynamic_smem[N2C_CPU_DYN_SMEM_BUF];
#else
alignas(16) thread_local unsigned char n2c_dynamic_smem[N2C_CPU_DYN_SMEM_BUF];
#endif
// A block-scope `extern thread_local` makes g++ reach the variable through a TLS wrapper that
// calls its (weak, undefined) dynamic-init function -- unguarded at some -O levels.  A no-op
// definition keeps that call harmless.
extern "C" void _ZTH16n2c_dynamic_smem() {}

// ---- verifier checks: where the scheduler calls them (defined in n2c_cpu_check.h) ------------
// Built with -DN2C_CPU_CHECKED (and -fsanitize=thread) for `numba2cuda verify`; otherwise
// every N2C_CHK(...) is nothing and fibers run in order.
#ifdef N2C_CPU_CHECKED
#define N2C_NOSAN __attribute__((no_sanitize_thread))
namespace n2c_cpu {
struct Runtime;
struct Fiber;
namespace chk {
void launch_begin(Runtime &r, char *slots);
void launch_end(Runtime &r);
void block_begin(Runtime &r);
void run(Fiber &f);
void yield(Fiber &f);
void barrier_done(Runtime &r);
void warp_done(Runtime &r, unsigned warp);
unsigned pick(Runtime &r, unsigned k);
void atomic_access(const volatile void *addr, unsigned bytes);
int suspend();
void resume(int flags);
}  // namespace chk
}  // namespace n2c_cpu
#define N2C_CHK(call) ::n2c_cpu::chk::call
#define N2C_PICK(r, k) ::n2c_cpu::chk::pick(r, k)
#else
#define N2C_NOSAN
#define N2C_CHK(call) ((void)0)
#define N2C_PICK(r, k) (k)
#endif

extern "C" void n2c_cpu_switch(void **save_sp, void *load_sp);
extern "C" void n2c_cpu_trampoline();

namespace n2c_cpu {

// A fiber's slot: header page, guard page, stack.  Slots are kSlotBytes-aligned so a fiber finds
// its own state by masking its stack pointer -- no TLS, so a kernel that overruns a __shared__
// array into the runtime's thread_local cannot derail the scheduler.
enum : uintptr_t { kSlotBytes = 512u << 10, kPage = 4096, kStackPoison = 8192 };
// Stack tops 512 KiB apart would all map to the same cache sets; stagger them.
inline uintptr_t stack_stagger(unsigned i) { return (i & 255u) * 144u; }
enum : unsigned { kMaxThreads = 1024, kDefaultDynSmem = 48u << 10 };
enum State : unsigned char { kReady, kAtBarrier, kAtWarp, kExited };
enum Op : unsigned char {
  kSync, kSyncCount, kSyncAnd, kSyncOr, kSyncWarp, kShflIdx, kShflUp, kShflDown, kShflXor,
  kAll, kAny, kUni, kBallot, kMatchAny, kMatchAll, kActiveMask, kGridSync,
};
static const char *const kOpName[] = {
  "__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__syncwarp",
  "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__all_sync", "__any_sync",
  "__uni_sync", "__ballot_sync", "__match_any_sync", "__match_all_sync", "__activemask",
  "this_grid().sync",
};

#ifdef N2C_CPU_USE_UCONTEXT
typedef ucontext_t Ctx;
#else
typedef void *Ctx;  // saved stack pointer; callee-saved registers live on that stack
#endif

struct Fiber {
  Ctx ctx;
  uint3 tid;
  State state;
  Op op;
  unsigned char size;   // operand bytes of a shuffle/match: b32 and b64 forms must not pair up
  int pred;             // vote/barrier predicate in; __match_all_sync predicate out
  unsigned line, mask;  // where it waits (source line) and the collective's member mask
  int b, c;             // PTX shfl operands: source lane/offset, and segment mask | clamp
  uint64_t val, res;    // collective operand and result, as raw bits
};

struct GridSync;

struct Runtime {
  Fiber fib[kMaxThreads];
  Ctx sched;
  unsigned n = 0, live = 0, at_barrier = 0, at_warp = 0;
  dim3 grid, block;
  uint3 bid{0, 0, 0};
  size_t shared_bytes = 0;
  void (*invoke)(void *) = nullptr;
  void *arg = nullptr;
  bool failed = false, tls_probed = false;
  cudaError_t last = cudaSuccess;
  char msg[2048] = "";
  unsigned char *tls_base = nullptr;  // this OS thread's copy of our PT_TLS segment
  size_t tls_size = 0;

  void fail(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  void wait(Fiber &f);
  void exit_fiber(Fiber &f);
  void try_barrier();
  void try_warp(unsigned w);
  void release_warp(unsigned lo, unsigned g);
  void report_deadlock();
  bool run_block(char *slots);
  bool grid_barrier();
  GridSync *gsync = nullptr;  // the grid barrier of a cooperative launch (one block per OS thread)
  bool grid_wait = false;     // every live thread of this block waits at this_grid().sync()
};

struct Slot { Fiber *fiber; Runtime *rt; };
inline Slot &slot() {
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return *reinterpret_cast<Slot *>(sp & ~(kSlotBytes - 1));
}
inline Fiber &cur() { return *slot().fiber; }
inline Runtime &cur_rt() { return *slot().rt; }

// Host side: one Runtime per OS thread (leaked at thread exit; n2c_cpu_release frees it).
#ifdef N2C_CPU_CHECKED  // on its own page: never in the padding that catches a __shared__ overrun
alignas(4096) static thread_local Runtime *tls_rt = nullptr;
#else
static thread_local Runtime *tls_rt = nullptr;
#endif
static int g_poison = 0xFF;  // poison byte, or -1 for none
inline Runtime &rt() { return *(tls_rt ? tls_rt : (tls_rt = new Runtime())); }

// ---- context switching -----------------------------------------------------------------------
// A hand-rolled switch costs a few ns; swapcontext makes a sigprocmask syscall per switch, which
// dominates barrier-heavy kernels.  ucontext remains the portable fallback (-DN2C_CPU_UCONTEXT).
static void fiber_main();
#ifdef N2C_CPU_USE_UCONTEXT
inline void ctx_switch(Ctx *from, Ctx *to) { swapcontext(from, to); }
inline void ctx_init(Ctx *c, char *lo, size_t size) {
  getcontext(c);
  c->uc_stack.ss_sp = lo, c->uc_stack.ss_size = size, c->uc_link = nullptr;
  makecontext(c, fiber_main, 0);
}
#else
asm(".pushsection .text\n"
    ".p2align 4\n.globl n2c_cpu_switch\n.hidden n2c_cpu_switch\n.type n2c_cpu_switch,@function\n"
    "n2c_cpu_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n"
    ".size n2c_cpu_switch, .-n2c_cpu_switch\n"
    ".p2align 4\n.globl n2c_cpu_trampoline\n.hidden n2c_cpu_trampoline\n"
    ".type n2c_cpu_trampoline,@function\n"
    "n2c_cpu_trampoline:\n  callq *%r12\n  ud2\n"
    ".size n2c_cpu_trampoline, .-n2c_cpu_trampoline\n"
    ".popsection\n");
inline void ctx_switch(Ctx *from, Ctx *to) { n2c_cpu_switch(from, *to); }
// The frame n2c_cpu_switch pops: r15..r12 (r12 = entry), rbx, rbp, then the return address =
// trampoline, whose call then sees the ABI's 16-byte stack alignment.  MXCSR is not switched:
// launch() sets it once for all fibers.
inline void ctx_init(Ctx *c, char *lo, size_t size) {
  const uintptr_t top = (reinterpret_cast<uintptr_t>(lo) + size) & ~uintptr_t(15);
  void **sp = reinterpret_cast<void **>(top - 72);
  sp[0] = sp[1] = sp[2] = sp[4] = sp[5] = nullptr;
  sp[3] = reinterpret_cast<void *>(&fiber_main);
  sp[6] = reinterpret_cast<void *>(&n2c_cpu_trampoline);
  *c = sp;
}
#endif

inline void Runtime::fail(const char *fmt, ...) {
  if (failed) return;  // keep the first, root-cause message
  failed = true;
  const int k = std::snprintf(msg, sizeof msg, "block (%u,%u,%u): ", bid.x, bid.y, bid.z);
  va_list ap;
  va_start(ap, fmt), std::vsnprintf(msg + k, sizeof msg - k, fmt, ap), va_end(ap);
}

// Park the calling fiber until it is released; after a failure it is never resumed.
inline void Runtime::wait(Fiber &f) {
  if (failed || f.state != kReady) ctx_switch(&f.ctx, &sched);
}

// The calling thread's end: at its kernel's end, or inside a device function (a raise there).
[[noreturn]] inline void end_thread() {
  Slot &s = slot();
  s.rt->exit_fiber(*s.fiber);
  __builtin_trap();  // never resumed
}

static void fiber_main() {
  Slot &s = slot();
  s.rt->invoke(s.rt->arg);
  end_thread();
}

inline void Runtime::exit_fiber(Fiber &f) {
  N2C_CHK(yield(f));
  f.state = kExited;
  --live;
  try_barrier();  // an exited thread no longer holds back a barrier or a warp collective
  if (at_warp) try_warp(static_cast<unsigned>(&f - fib) / 32);
  ctx_switch(&f.ctx, &sched);
}

inline void Runtime::try_barrier() {
  if (at_barrier == 0 || at_barrier != live) return;
  const Fiber *first = nullptr;
  unsigned count = 0;
  for (unsigned i = 0; i < n; ++i) {
    const Fiber &f = fib[i];
    if (f.state != kAtBarrier) continue;
    if (!first) first = &f;
    if (f.op != first->op || f.line != first->line)
      return fail("divergent barrier: thread (%u,%u,%u) waits at %s (line %u), thread (%u,%u,%u) at %s "
                  "(line %u)", first->tid.x, first->tid.y, first->tid.z, kOpName[first->op], first->line,
                  f.tid.x, f.tid.y, f.tid.z, kOpName[f.op], f.line);
    count += f.pred != 0;
  }
  if (first->op == kGridSync) {
    if (gsync) {  // the whole grid must arrive: the scheduler waits for the other blocks (run_block)
      grid_wait = true;
      return;
    }
    if (1ull * grid.x * grid.y * grid.z > 1)
      return fail("cuda.cg.this_grid().sync() (line %u) in a launch that is not cooperative: the blocks of a "
                  "grid barrier must all be resident (cudaLaunchCooperativeKernel)", first->line);
  }
  const uint64_t res[] = {0, count, count == at_barrier, count != 0};  // indexed by kSync..kSyncOr
  for (unsigned i = 0; i < n; ++i)
    if (fib[i].state == kAtBarrier) fib[i].res = res[fib[i].op], fib[i].state = kReady;
  at_barrier = 0;
  N2C_CHK(barrier_done(*this));
}

// Source lane of a shuffle exactly as PTX shfl.sync computes it (b = lane/offset operand,
// c = ((32 - width) << 8) | clamp); an invalid source means the own lane.
inline unsigned shfl_source(Op op, unsigned lane, int b, int c) {
  const int l = static_cast<int>(lane), bval = b & 31, cval = c & 31, seg = (c >> 8) & 31;
  const int max_lane = (l & seg) | (cval & ~seg), min_lane = l & seg;
  int j;
  bool ok;
  switch (op) {
    case kShflUp: j = l - bval; ok = j >= max_lane; break;
    case kShflDown: j = l + bval; ok = j <= max_lane; break;
    case kShflXor: j = l ^ bval; ok = j <= max_lane; break;
    default: j = min_lane | (bval & ~seg); ok = j <= max_lane; break;
  }
  return static_cast<unsigned>(ok ? j : l);
}

// Complete the collective of lanes g (bit k = lane k) in the warp starting at thread lo.
inline void Runtime::release_warp(unsigned lo, unsigned g) {
  unsigned ballot = 0;
  for (unsigned k = 0; k < 32; ++k)
    if ((g >> k & 1) && fib[lo + k].pred) ballot |= 1u << k;
  for (unsigned k = 0; k < 32; ++k) {
    if (!(g >> k & 1)) continue;
    Fiber &f = fib[lo + k];
    unsigned same = 0, s;
    switch (f.op) {
      case kShflIdx: case kShflUp: case kShflDown: case kShflXor:
        s = shfl_source(f.op, k, f.b, f.c);
        f.res = (g >> s & 1) ? fib[lo + s].val : f.val;  // source outside the group: own value
        break;
      case kAll: f.res = ballot == g; break;
      case kAny: f.res = ballot != 0; break;
      case kUni: f.res = ballot == 0 || ballot == g; break;
      case kBallot: f.res = ballot; break;
      case kMatchAny: case kMatchAll:
        for (unsigned j = 0; j < 32; ++j)
          if ((g >> j & 1) && fib[lo + j].val == f.val) same |= 1u << j;
        if (f.op == kMatchAll) f.pred = same == g;
        f.res = f.op == kMatchAny ? same : same == g ? g : 0;
        break;
      default: f.res = 0; break;
    }
  }
  for (unsigned k = 0; k < 32; ++k)
    if (g >> k & 1) fib[lo + k].state = kReady;
  at_warp -= __builtin_popcount(g);
  if (fib[lo + __builtin_ctz(g)].op == kSyncWarp) N2C_CHK(warp_done(*this, lo / 32));
}

// Called whenever a lane of warp w blocks or exits: complete every group that now can.
inline void Runtime::try_warp(unsigned w) {
  const unsigned lo = w * 32, hi = lo + 32 < n ? lo + 32 : n;
  unsigned live_m = 0, ready = 0, coll = 0, am = 0;
  for (unsigned i = lo; i < hi; ++i) {
    const unsigned bit = 1u << (i - lo);
    const Fiber &f = fib[i];
    if (f.state != kExited) live_m |= bit;
    if (f.state == kReady) ready |= bit;
    if (f.state == kAtWarp) (f.op == kActiveMask ? am : coll) |= bit;
  }
  for (unsigned pend = coll; pend;) {
    const unsigned j = __builtin_ctz(pend);
    const Fiber &fj = fib[lo + j];
    const unsigned g = fj.mask & live_m;
    pend &= ~(1u << j);
    if (g & ~coll) continue;  // a member has not arrived yet
    for (unsigned k = 0; k < 32; ++k) {
      const Fiber &fk = fib[lo + k];
      if ((g >> k & 1) && (fk.op != fj.op || fk.size != fj.size || (fk.mask & live_m) != g))
        return fail("mismatched warp collectives in warp %u: lane %u at %s(mask 0x%08x, %u-byte) line %u, "
                    "lane %u at %s(mask 0x%08x, %u-byte) line %u", w, j, kOpName[fj.op], fj.mask, fj.size,
                    fj.line, k, kOpName[fk.op], fk.mask, fk.size, fk.line);
    }
    release_warp(lo, g);
    coll &= ~g;
    pend &= ~g;
    ready |= g;
  }
  // __activemask is no collective, but "active" only means something relative to the other
  // lanes: once no lane of the warp can run, lanes waiting at the same call site are converged.
  while (!ready && am) {
    const unsigned line = fib[lo + __builtin_ctz(am)].line;
    unsigned g = 0;
    for (unsigned k = 0; k < 32; ++k)
      if ((am >> k & 1) && fib[lo + k].line == line) g |= 1u << k;
    for (unsigned k = 0; k < 32; ++k)
      if (g >> k & 1) fib[lo + k].res = g, fib[lo + k].state = kReady;
    at_warp -= __builtin_popcount(g);
    am &= ~g;
  }
}

// "deadlock ...:\n  <op>(mask) at line L: threads 0-15 40" -- one line per kind of wait.
inline void Runtime::report_deadlock() {
  int k = std::snprintf(msg, sizeof msg, "block (%u,%u,%u): deadlock, %u live thread(s) can never proceed:",
                        bid.x, bid.y, bid.z, live);
  failed = true;
  bool done[kMaxThreads] = {};
  auto same = [this](unsigned a, unsigned b) {
    return fib[a].state == fib[b].state && fib[a].op == fib[b].op && fib[a].line == fib[b].line &&
           fib[a].mask == fib[b].mask;
  };
  for (unsigned i = 0; i < n && k < int(sizeof msg) - 200; ++i) {
    const Fiber &f = fib[i];
    if (f.state == kExited || done[i]) continue;
    k += std::snprintf(msg + k, sizeof msg - k, "\n  %s", kOpName[f.op]);
    if (f.state == kAtWarp && f.op != kActiveMask)
      k += std::snprintf(msg + k, sizeof msg - k, "(mask 0x%08x)", f.mask);
    k += std::snprintf(msg + k, sizeof msg - k, " at line %u: threads", f.line);
    for (unsigned j = i, shown = 0; j < n; ++j) {
      if (!same(i, j)) continue;
      unsigned e = j;
      done[j] = true;
      while (e + 1 < n && same(i, e + 1)) done[++e] = true;
      if (++shown <= 6 && k < int(sizeof msg) - 40)
        k += e == j ? std::snprintf(msg + k, sizeof msg - k, " %u", j)
                    : std::snprintf(msg + k, sizeof msg - k, " %u-%u", j, e);
      j = e;
    }
  }
}

// Run one block to completion; false (with msg) on failure.
inline bool Runtime::run_block(char *slots) {
  for (unsigned i = 0; i < n; ++i) {
    Fiber &f = fib[i];
    f.tid = uint3{i % block.x, i / block.x % block.y, i / (block.x * block.y)};
    f.state = kReady, f.op = kSync, f.line = f.mask = 0;
    ctx_init(&f.ctx, slots + i * kSlotBytes + 2 * kPage, kSlotBytes - 2 * kPage - stack_stagger(i));
  }
  live = n;
  at_barrier = at_warp = 0;
  N2C_CHK(block_begin(*this));
  for (;;) {
    bool ran = false;
    for (unsigned k = 0; k < n; ++k) {
      const unsigned i = N2C_PICK(*this, k);
      if (fib[i].state != kReady) continue;
      N2C_CHK(run(fib[i]));
      ctx_switch(&sched, &fib[i].ctx);
      ran = true;
      if (failed) return false;
    }
    if (live == 0) return true;
    if (!ran && grid_wait) {  // the block waits at the grid barrier: so does this OS thread
      if (!grid_barrier()) return false;
      continue;
    }
    if (!ran) return report_deadlock(), false;
  }
}

// ---- the grid barrier of a cooperative launch ------------------------------------------------
struct GridSync {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
  unsigned total = 0, arrived = 0, done = 0, line = 0;
  unsigned long gen = 0;
  uint3 first{0, 0, 0};  // the first block to arrive in this round (for messages)
  bool failed = false;
  char msg[2048] = "";

  void fail_locked(const char *fmt, ...) __attribute__((format(printf, 2, 3))) {
    if (failed) return;
    failed = true;
    va_list ap;
    va_start(ap, fmt), std::vsnprintf(msg, sizeof msg, fmt, ap), va_end(ap);
  }
  // false when the grid failed (a block failed, diverged or ended without reaching the barrier)
  bool arrive(const Runtime &r, unsigned at_line) {
    pthread_mutex_lock(&mu);
    if (!failed && arrived == 0) first = r.bid, line = at_line;
    if (!failed && at_line != line)
      fail_locked("divergent grid barrier: block (%u,%u,%u) waits at this_grid().sync() at line %u, block "
                  "(%u,%u,%u) at line %u", first.x, first.y, first.z, line, r.bid.x, r.bid.y, r.bid.z, at_line);
    ++arrived;
    const unsigned long round = gen;
    if (!failed && arrived + done == total) {
      if (done)
        fail_locked("deadlock: %u block(s) wait at this_grid().sync() (line %u) but %u block(s) of the grid ended "
                    "without reaching it; on the GPU this hangs", arrived, line, done);
      arrived = 0, ++gen;
      pthread_cond_broadcast(&cv);
    }
    while (!failed && gen == round) pthread_cond_wait(&cv, &mu);
    const bool ok = !failed;
    pthread_mutex_unlock(&mu);
    return ok;
  }
  void finish(const Runtime &r, bool ok) {
    pthread_mutex_lock(&mu);
    ++done;
    if (!ok && !failed) {
      failed = true;
      std::snprintf(msg, sizeof msg, "%s", r.msg);
    } else if (arrived && arrived + done == total) {
      fail_locked("deadlock: block (%u,%u,%u) ended while %u block(s) wait at this_grid().sync() (line %u); every "
                  "block must reach it, and on the GPU this hangs", r.bid.x, r.bid.y, r.bid.z, arrived, line);
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
  }
};

// Every live thread of this block waits at this_grid().sync(): wait for the other blocks, then release them.
inline bool Runtime::grid_barrier() {
  unsigned at_line = 0;
  for (unsigned i = 0; i < n; ++i)
    if (fib[i].state == kAtBarrier) at_line = fib[i].line;
  if (!gsync->arrive(*this, at_line)) {
    failed = true;
    std::snprintf(msg, sizeof msg, "%s", gsync->msg);
    return false;
  }
  for (unsigned i = 0; i < n; ++i)
    if (fib[i].state == kAtBarrier) fib[i].res = 0, fib[i].state = kReady;
  at_barrier = 0, grid_wait = false;
  return true;
}

// ---- device-side entry points ----------------------------------------------------------------
inline int barrier(Op op, int pred, unsigned line) {
  Runtime &r = cur_rt();
  Fiber &f = cur();
  N2C_CHK(yield(f));
  f.state = kAtBarrier, f.op = op, f.pred = pred != 0, f.line = line;
  ++r.at_barrier;
  r.try_barrier();
  if (r.at_warp) r.try_warp(static_cast<unsigned>(&f - r.fib) / 32);  // may settle an __activemask
  r.wait(f);
  return static_cast<int>(f.res);
}

inline Fiber &warp_op(Op op, unsigned size, unsigned mask, uint64_t val, int pred, int b, int c, unsigned line) {
  Runtime &r = cur_rt();
  Fiber &f = cur();
  const unsigned lin = static_cast<unsigned>(&f - r.fib);
  N2C_CHK(yield(f));
  f.state = kAtWarp, f.op = op, f.size = static_cast<unsigned char>(size), f.mask = mask, f.val = val;
  f.pred = pred != 0, f.b = b, f.c = c, f.line = line;
  ++r.at_warp;
  if (op != kActiveMask && !(mask >> (lin % 32) & 1))
    r.fail("thread (%u,%u,%u) (lane %u) calls %s at line %u with mask 0x%08x that excludes itself",
           f.tid.x, f.tid.y, f.tid.z, lin % 32, kOpName[op], line, mask);
  else
    r.try_warp(lin / 32);
  r.wait(f);
  return f;
}

template <class T> inline uint64_t bits_of(T v) { uint64_t u = 0; std::memcpy(&u, &v, sizeof v); return u; }
template <class T> inline T shfl(Op op, unsigned mask, T v, int b, int width, bool clamp_high, unsigned line) {
  const int c = static_cast<int>((32u - static_cast<unsigned>(width)) << 8) | (clamp_high ? 0x1f : 0);
  T out;
  std::memcpy(&out, &warp_op(op, sizeof(T), mask, bits_of(v), 0, b, c, line).res, sizeof out);
  return out;
}

// Integer atomics wrap like the hardware, without signed-overflow UB in the host compiler.
template <class T> inline T wrap_add(T a, T b) {
  typedef typename std::make_unsigned<T>::type U;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}

// ---- kernel attributes and launch ------------------------------------------------------------
typedef void (*AnyFn)();
static struct { AnyFn fn; int max_dyn; } g_attr[256];
static int g_attr_n = 0, g_attr_lock = 0;  // spinlock: launches may come from several threads
struct AttrLock {
  AttrLock() { while (__atomic_exchange_n(&g_attr_lock, 1, __ATOMIC_ACQUIRE)) {} }
  ~AttrLock() { __atomic_store_n(&g_attr_lock, 0, __ATOMIC_RELEASE); }
};

inline int probe_cb(dl_phdr_info *info, size_t, void *data) {
  Runtime *r = static_cast<Runtime *>(data);
  unsigned char *b = static_cast<unsigned char *>(info->dlpi_tls_data);
  for (int i = 0; b && i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_TLS && n2c_dynamic_smem >= b &&
        n2c_dynamic_smem < b + info->dlpi_phdr[i].p_memsz)
      return r->tls_base = b, r->tls_size = info->dlpi_phdr[i].p_memsz, 1;
  return 0;
}
inline void probe_tls(Runtime &r) {
  if (r.tls_probed) return;
  // This thread's copy of a dlopen'ed module's TLS exists only once touched; before that,
  // dl_iterate_phdr reports no dlpi_tls_data for it.
  unsigned char *volatile touch = n2c_dynamic_smem;
  *touch = 0;
  r.tls_probed = true;
  dl_iterate_phdr(probe_cb, &r);
}

// Poison [0, shared_bytes) of the dynamic buffer and every static __shared__ array.
inline void poison_block(Runtime &r) {
  if (g_poison < 0) return;
  unsigned char *d = n2c_dynamic_smem, *d_end = d + N2C_CPU_DYN_SMEM_BUF;
  // The writes below deliberately run past n2c_dynamic_smem over the rest of the TLS block; hide
  // the pointers' provenance, or _FORTIFY_SOURCE (on by default in Ubuntu's g++) aborts the process.
  asm("" : "+r"(d), "+r"(d_end));
  std::memset(d, g_poison, r.shared_bytes);
  if (!r.tls_base) return;
  std::memset(r.tls_base, g_poison, static_cast<size_t>(d - r.tls_base));
  std::memset(d_end, g_poison, static_cast<size_t>(r.tls_base + r.tls_size - d_end));
  *static_cast<Runtime *volatile *>(&tls_rt) = &r;  // volatile: the compiler can't see memset hit it
}

// Run the blocks of a launch on this OS thread, every one or (a cooperative launch's worker) just *only.
inline bool run_blocks(Runtime &r, const uint3 *only) {
  probe_tls(r);
  // Slots live only for the launch: a process may load hundreds of kernel .so files, and
  // per-slot guard pages cost VMAs.
  const size_t len = kSlotBytes * (r.n + 1);
  char *map = static_cast<char *>(mmap(nullptr, len, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (map == MAP_FAILED)
    return std::snprintf(r.msg, sizeof r.msg, "cannot map %zu bytes of fiber stacks", len), false;
  char *slots = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(map) + kSlotBytes - 1) & ~(kSlotBytes - 1));
  for (unsigned i = 0; i < r.n; ++i) {
    char *s = slots + i * kSlotBytes;
    *reinterpret_cast<Slot *>(s) = Slot{&r.fib[i], &r};
    mprotect(s + kPage, kPage, PROT_NONE);
    if (g_poison >= 0) std::memset(s + kSlotBytes - kStackPoison - stack_stagger(i), g_poison, kStackPoison);
  }
  const size_t shared_bytes = r.shared_bytes;
  unsigned char *tail = n2c_dynamic_smem + shared_bytes;
  const size_t tail_len = N2C_CPU_DYN_SMEM_BUF - shared_bytes;
  if (g_poison >= 0) std::memset(tail, g_poison, tail_len);

#if defined(__x86_64__)
  // Kernels run with MXCSR's defaults (round to nearest, no flush-to-zero: CUDA without -ftz),
  // not whatever the host process left in this thread (torch can set FTZ/DAZ).
  const unsigned host_mxcsr = __builtin_ia32_stmxcsr();
  __builtin_ia32_ldmxcsr(0x1F80u);
#endif
  bool ok = true;
  if (only)  // a block of a cooperative launch (unchecked: see launch())
    r.bid = *only, poison_block(r), ok = r.run_block(slots);
  if (!only) N2C_CHK(launch_begin(r, slots));
  for (unsigned z = 0; !only && ok && z < r.grid.z; ++z)
    for (unsigned y = 0; ok && y < r.grid.y; ++y)
      for (unsigned x = 0; ok && x < r.grid.x; ++x) r.bid = uint3{x, y, z}, poison_block(r), ok = r.run_block(slots);
  if (!only) N2C_CHK(launch_end(r));
  munmap(map, len);
#if defined(__x86_64__)
  __builtin_ia32_ldmxcsr(host_mxcsr);
#endif
  *static_cast<Runtime *volatile *>(&tls_rt) = &r;  // in case a kernel overran into it
  // All tail bytes equal the poison iff the first does and each equals its successor.
  const unsigned char p = static_cast<unsigned char>(g_poison);
  if (ok && g_poison >= 0 && (tail[0] != p || std::memcmp(tail, tail + 1, tail_len - 1) != 0)) {
    size_t i = 0;
    while (tail[i] == p) ++i;
    std::snprintf(r.msg, sizeof r.msg, "a thread wrote past the %zu bytes of dynamic shared memory "
                  "(byte offset %zu)", shared_bytes, shared_bytes + i);
    ok = false;
  }
  return ok;
}

// One block of a cooperative launch, on its own OS thread: its thread_local __shared__ is its own.
struct BlockJob {
  const Runtime *proto;
  GridSync *gs;
  uint3 bid;
  bool ok;
  char msg[2048];
};
inline void *block_worker(void *p) {
  BlockJob &job = *static_cast<BlockJob *>(p);
  Runtime *r = new Runtime();
  tls_rt = r;
  r->grid = job.proto->grid, r->block = job.proto->block, r->n = job.proto->n;
  r->shared_bytes = job.proto->shared_bytes, r->invoke = job.proto->invoke, r->arg = job.proto->arg;
  r->gsync = job.gs, r->bid = job.bid;
  job.ok = run_blocks(*r, &job.bid);
  job.gs->finish(*r, job.ok);
  std::snprintf(job.msg, sizeof job.msg, "%s", r->msg);
  delete r;
  tls_rt = nullptr;
  return nullptr;
}

inline bool run_cooperative(Runtime &r) {
  const unsigned total = r.grid.x * r.grid.y * r.grid.z;
  GridSync gs;
  gs.total = total;
  BlockJob *jobs = new BlockJob[total];
  pthread_t *threads = new pthread_t[total];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1u << 20);
  unsigned started = 0;
  for (unsigned z = 0; z < r.grid.z; ++z)
    for (unsigned y = 0; y < r.grid.y; ++y)
      for (unsigned x = 0; x < r.grid.x; ++x) {
        BlockJob &job = jobs[started];
        job.proto = &r, job.gs = &gs, job.bid = uint3{x, y, z}, job.ok = false, job.msg[0] = 0;
        if (pthread_create(&threads[started], &attr, block_worker, &job) != 0) {
          Runtime stand_in;  // the blocks already started must not wait for this one at a grid barrier
          stand_in.bid = job.bid;
          std::snprintf(stand_in.msg, sizeof stand_in.msg, "cannot start an OS thread for block (%u,%u,%u) of a "
                        "cooperative launch of %u blocks", x, y, z, total);
          for (unsigned k = started; k < total; ++k) gs.finish(stand_in, false);
          goto joined;
        }
        ++started;
      }
joined:
  for (unsigned k = 0; k < started; ++k) pthread_join(threads[k], nullptr);
  pthread_attr_destroy(&attr);
  bool ok = !gs.failed;
  for (unsigned k = 0; k < started; ++k) ok = ok && jobs[k].ok;
  if (!ok) {
    const char *why = gs.msg[0] ? gs.msg : "";
    for (unsigned k = 0; !why[0] && k < started; ++k)
      if (!jobs[k].ok) why = jobs[k].msg;
    std::snprintf(r.msg, sizeof r.msg, "%s", why);
  }
  delete[] threads;
  delete[] jobs;
  return ok;
}

inline cudaError_t launch(AnyFn key, dim3 grid, dim3 block, size_t shared_bytes, void (*invoke)(void *),
                          void *arg, bool cooperative = false) {
  Runtime &r = rt();
  r.failed = false, r.msg[0] = 0, r.bid = uint3{0, 0, 0}, r.gsync = nullptr, r.grid_wait = false;
  const unsigned long long nthreads = 1ull * block.x * block.y * block.z;
  int max_dyn = kDefaultDynSmem;
  {
    AttrLock lock;
    for (int i = 0; i < g_attr_n; ++i)
      if (g_attr[i].fn == key) max_dyn = g_attr[i].max_dyn;
  }
  if (!grid.x || !grid.y || !grid.z || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    std::snprintf(r.msg, sizeof r.msg, "invalid grid (%u,%u,%u)", grid.x, grid.y, grid.z);
  else if (!nthreads || nthreads > kMaxThreads || block.x > 1024 || block.y > 1024 || block.z > 64)
    std::snprintf(r.msg, sizeof r.msg, "invalid block (%u,%u,%u)", block.x, block.y, block.z);
  else if (shared_bytes > static_cast<size_t>(max_dyn))
    std::snprintf(r.msg, sizeof r.msg, "%zu bytes of dynamic shared memory exceed the kernel's limit of %d%s",
                  shared_bytes, max_dyn, max_dyn == int(kDefaultDynSmem) ? " (see cudaFuncSetAttribute)" : "");
  if (r.msg[0]) return r.last = cudaErrorInvalidConfiguration;
  r.grid = grid, r.block = block, r.n = static_cast<unsigned>(nthreads), r.shared_bytes = shared_bytes;
  r.invoke = invoke, r.arg = arg;
  const bool together = cooperative && 1ull * grid.x * grid.y * grid.z > 1;
#ifdef N2C_CPU_CHECKED
  // the checks keep one state per process, and a cooperative launch runs its blocks on OS threads at once
  const int checks = together ? ::n2c_cpu::chk::suspend() : 0;
#endif
  const bool ok = together ? run_cooperative(r) : run_blocks(r, nullptr);
#ifdef N2C_CPU_CHECKED
  if (together) ::n2c_cpu::chk::resume(checks);
#endif
  std::fflush(stdout);  // device printf output appears at synchronisation
  return r.last = ok ? cudaSuccess : cudaErrorLaunchFailure;
}

template <class Tup, size_t... I> Tup unpack(void **args, std::index_sequence<I...>) {
  return Tup{*static_cast<typename std::tuple_element<I, Tup>::type *>(args[I])...};
}

}  // namespace n2c_cpu

// ---- CUDA built-in variables -----------------------------------------------------------------
#define threadIdx (static_cast<const uint3 &>(::n2c_cpu::cur().tid))
#define blockIdx (static_cast<const uint3 &>(::n2c_cpu::cur_rt().bid))
#define blockDim (static_cast<const dim3 &>(::n2c_cpu::cur_rt().block))
#define gridDim (static_cast<const dim3 &>(::n2c_cpu::cur_rt().grid))

// A thread that ends inside a device function (a raise there): its fiber exits as at the kernel's end.
[[noreturn]] inline void n2c_cpu_exit_thread() { n2c_cpu::end_thread(); }
inline unsigned n2c_cpu_dynamic_smem_size() { return static_cast<unsigned>(n2c_cpu::cur_rt().shared_bytes); }

// ---- barriers, fences ------------------------------------------------------------------------
// The defaulted `line` records the caller's source line (divergence checks, deadlock reports).
inline void __syncthreads(unsigned line = __builtin_LINE()) { n2c_cpu::barrier(n2c_cpu::kSync, 0, line); }
inline int __syncthreads_count(int p, unsigned line = __builtin_LINE()) { return n2c_cpu::barrier(n2c_cpu::kSyncCount, p, line); }
inline int __syncthreads_and(int p, unsigned line = __builtin_LINE()) { return n2c_cpu::barrier(n2c_cpu::kSyncAnd, p, line); }
inline int __syncthreads_or(int p, unsigned line = __builtin_LINE()) { return n2c_cpu::barrier(n2c_cpu::kSyncOr, p, line); }
// Fibers interleave only at synchronisation points, so memory is always coherent.
inline void __threadfence() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
// cuda.nanosleep: a hint to wait about that long; fibers run one at a time, so there is no one to wait for.
inline void __nanosleep(unsigned) {}
inline void __trap() {
  n2c_cpu::Fiber &f = n2c_cpu::cur();
  n2c_cpu::cur_rt().fail("__trap() in thread (%u,%u,%u)", f.tid.x, f.tid.y, f.tid.z);
  n2c_cpu::cur_rt().wait(f);
  __builtin_unreachable();
}

// ---- warp collectives ------------------------------------------------------------------------
inline void __syncwarp(unsigned mask = 0xffffffffu, unsigned line = __builtin_LINE()) {
  n2c_cpu::warp_op(n2c_cpu::kSyncWarp, 0, mask, 0, 0, 0, 0, line);
}
inline unsigned __activemask(unsigned line = __builtin_LINE()) {
  return static_cast<unsigned>(n2c_cpu::warp_op(n2c_cpu::kActiveMask, 0, 0, 0, 0, 0, 0, line).res);
}
#define N2C_VOTE(NAME, OP, R)                                                                 \
  inline R NAME(unsigned mask, int pred, unsigned line = __builtin_LINE()) {                  \
    return static_cast<R>(n2c_cpu::warp_op(n2c_cpu::OP, 0, mask, 0, pred, 0, 0, line).res); \
  }
N2C_VOTE(__all_sync, kAll, int) N2C_VOTE(__any_sync, kAny, int)
N2C_VOTE(__uni_sync, kUni, int) N2C_VOTE(__ballot_sync, kBallot, unsigned)
#undef N2C_VOTE

// Overload sets as in CUDA's headers, so a call nvcc would reject is rejected here too.
#define N2C_SHFL(T)                                                                                       \
  inline T __shfl_sync(unsigned mask, T v, int src, int width = warpSize, unsigned line = __builtin_LINE()) { \
    return n2c_cpu::shfl(n2c_cpu::kShflIdx, mask, v, src, width, true, line);                             \
  }                                                                                                       \
  inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = warpSize, unsigned line = __builtin_LINE()) { \
    return n2c_cpu::shfl(n2c_cpu::kShflUp, mask, v, static_cast<int>(d), width, false, line);             \
  }                                                                                                       \
  inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = warpSize, unsigned line = __builtin_LINE()) { \
    return n2c_cpu::shfl(n2c_cpu::kShflDown, mask, v, static_cast<int>(d), width, true, line);            \
  }                                                                                                       \
  inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = warpSize, unsigned line = __builtin_LINE()) { \
    return n2c_cpu::shfl(n2c_cpu::kShflXor, mask, v, m, width, true, line);                               \
  }                                                                                                       \
  inline unsigned __match_any_sync(unsigned mask, T v, unsigned line = __builtin_LINE()) {                \
    return static_cast<unsigned>(                                                                         \
        n2c_cpu::warp_op(n2c_cpu::kMatchAny, sizeof(T), mask, n2c_cpu::bits_of(v), 0, 0, 0, line).res);   \
  }                                                                                                       \
  inline unsigned __match_all_sync(unsigned mask, T v, int *pred, unsigned line = __builtin_LINE()) {     \
    n2c_cpu::Fiber &f = n2c_cpu::warp_op(n2c_cpu::kMatchAll, sizeof(T), mask, n2c_cpu::bits_of(v), 0, 0, 0, line); \
    *pred = f.pred;                                                                                       \
    return static_cast<unsigned>(f.res);                                                                  \
  }
N2C_SHFL(int) N2C_SHFL(unsigned int) N2C_SHFL(long) N2C_SHFL(unsigned long)
N2C_SHFL(long long) N2C_SHFL(unsigned long long) N2C_SHFL(float) N2C_SHFL(double)
#undef N2C_SHFL

// ---- atomics: CUDA's overload sets (no double atomicExch, no signed 64-bit add) --------------
// Fibers are cooperative, so a plain read-modify-write cannot be interleaved.
// Checked builds: an atomic is one access the race checks know as atomic, not a plain read and write.
#define N2C_ATOMIC(NAME, T, EXPR) \
  N2C_NOSAN inline T NAME(T *addr, T val) { N2C_CHK(atomic_access(addr, sizeof(T))); T old = *addr; *addr = (EXPR); return old; }
#define N2C_ATOMIC_INT(NAME, EXPR) \
  N2C_ATOMIC(NAME, int, EXPR) N2C_ATOMIC(NAME, unsigned int, EXPR) N2C_ATOMIC(NAME, unsigned long long, EXPR)
N2C_ATOMIC_INT(atomicAdd, n2c_cpu::wrap_add(old, val))
N2C_ATOMIC(atomicAdd, float, old + val) N2C_ATOMIC(atomicAdd, double, old + val)
N2C_ATOMIC(atomicSub, int, static_cast<int>(static_cast<unsigned>(old) - static_cast<unsigned>(val)))
N2C_ATOMIC(atomicSub, unsigned int, old - val)
N2C_ATOMIC_INT(atomicExch, val) N2C_ATOMIC(atomicExch, float, val)
N2C_ATOMIC_INT(atomicMin, val < old ? val : old) N2C_ATOMIC(atomicMin, long long, val < old ? val : old)
N2C_ATOMIC_INT(atomicMax, val > old ? val : old) N2C_ATOMIC(atomicMax, long long, val > old ? val : old)
N2C_ATOMIC_INT(atomicAnd, old & val) N2C_ATOMIC_INT(atomicOr, old | val) N2C_ATOMIC_INT(atomicXor, old ^ val)
N2C_ATOMIC(atomicInc, unsigned int, (old >= val) ? 0u : old + 1u)
N2C_ATOMIC(atomicDec, unsigned int, ((old == 0u) || (old > val)) ? val : old - 1u)
#undef N2C_ATOMIC_INT
#undef N2C_ATOMIC
#define N2C_CAS(T) \
  N2C_NOSAN inline T atomicCAS(T *addr, T cmp, T val) { \
    N2C_CHK(atomic_access(addr, sizeof(T))); T old = *addr; if (old == cmp) *addr = val; return old; }
N2C_CAS(int) N2C_CAS(unsigned int) N2C_CAS(unsigned long long) N2C_CAS(unsigned short)
#undef N2C_CAS

// ---- integer and math intrinsics -------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz(static_cast<unsigned>(x)) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll(static_cast<unsigned long long>(x)) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned long long __brevll(unsigned long long x) {
  unsigned long long r = 0;
  for (int i = 0; i < 64; ++i, x >>= 1) r = (r << 1) | (x & 1);
  return r;
}
inline unsigned int __brev(unsigned int x) { return static_cast<unsigned>(__brevll(x) >> 32); }
// |x - y| + z: the difference of two ints is taken exactly (it may not fit an int), as the PTX sad does
inline unsigned int __sad(int x, int y, unsigned int z) {
    long long d = static_cast<long long>(x) - y;
    return static_cast<unsigned int>(d < 0 ? -d : d) + z;
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return (x > y ? x - y : y - x) + z; }
#define N2C_BITCAST(NAME, FROM, TO) \
  inline TO NAME(FROM x) { TO y; std::memcpy(&y, &x, sizeof y); return y; }
N2C_BITCAST(__int_as_float, int, float) N2C_BITCAST(__float_as_int, float, int)
N2C_BITCAST(__uint_as_float, unsigned int, float) N2C_BITCAST(__float_as_uint, float, unsigned int)
N2C_BITCAST(__longlong_as_double, long long, double) N2C_BITCAST(__double_as_longlong, double, long long)
#undef N2C_BITCAST
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
template <class T> inline T __ldg(const T *p) { return *p; }
// cuda.ldcg(a, i), cuda.stcs(a, i, v), ...: a cache hint, where the CPU has one memory and no hint to give
template <class T> inline T __ldca(const T *p) { return *p; }
template <class T> inline T __ldcg(const T *p) { return *p; }
template <class T> inline T __ldcs(const T *p) { return *p; }
template <class T> inline T __ldlu(const T *p) { return *p; }
template <class T> inline T __ldcv(const T *p) { return *p; }
template <class T, class V> inline void __stcg(T *p, V v) { *p = (T)v; }
template <class T, class V> inline void __stcs(T *p, V v) { *p = (T)v; }
template <class T, class V> inline void __stwb(T *p, V v) { *p = (T)v; }
template <class T, class V> inline void __stwt(T *p, V v) { *p = (T)v; }

// CUDA's global min/max (math_functions.hpp): mixed signedness compares as unsigned; floating
// point goes through fmin/fmax (a NaN operand yields the other one).
#define N2C_MINMAX(R, A, B)                                                                              \
  inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
  inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
#define N2C_MINMAX_INT(S, U) N2C_MINMAX(S, S, S) N2C_MINMAX(U, U, U) N2C_MINMAX(U, S, U) N2C_MINMAX(U, U, S)
N2C_MINMAX_INT(int, unsigned int) N2C_MINMAX_INT(long, unsigned long) N2C_MINMAX_INT(long long, unsigned long long)
#undef N2C_MINMAX_INT
#undef N2C_MINMAX
#define N2C_FMINMAX(R, A, B) \
  inline R min(A a, B b) { return fmin(static_cast<R>(a), static_cast<R>(b)); } \
  inline R max(A a, B b) { return fmax(static_cast<R>(a), static_cast<R>(b)); }
N2C_FMINMAX(double, double, double) N2C_FMINMAX(double, float, double) N2C_FMINMAX(double, double, float)
#undef N2C_FMINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }

// ---- host API --------------------------------------------------------------------------------
inline cudaError_t cudaGetLastError() { const cudaError_t e = n2c_cpu::rt().last; n2c_cpu::rt().last = cudaSuccess; return e; }
inline cudaError_t cudaPeekAtLastError() { return n2c_cpu::rt().last; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }  // launches are synchronous
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline const char *cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error" : e == cudaErrorInvalidValue ? "invalid argument"
       : e == cudaErrorInvalidConfiguration ? "invalid configuration argument"
       : e == cudaErrorCooperativeLaunchTooLarge ? "too many blocks in cooperative launch" : "unspecified launch failure";
}

template <class F> inline cudaError_t cudaFuncSetAttribute(F *func, cudaFuncAttribute attr, int value) {
  n2c_cpu::Runtime &r = n2c_cpu::rt();
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;
  if (value < 0 || value > int(N2C_CPU_DYN_SMEM_MAX)) {
    std::snprintf(r.msg, sizeof r.msg, "cudaFuncSetAttribute: %d bytes of dynamic shared memory exceed "
                  "the device maximum of %u", value, N2C_CPU_DYN_SMEM_MAX);
    return r.last = cudaErrorInvalidValue;
  }
  const n2c_cpu::AnyFn key = reinterpret_cast<n2c_cpu::AnyFn>(func);
  n2c_cpu::AttrLock lock;
  int i = 0;
  while (i < n2c_cpu::g_attr_n && n2c_cpu::g_attr[i].fn != key) ++i;
  if (i == 256) return r.last = cudaErrorInvalidValue;
  n2c_cpu::g_attr[i].fn = key, n2c_cpu::g_attr[i].max_dyn = value;
  if (i == n2c_cpu::g_attr_n) ++n2c_cpu::g_attr_n;
  return cudaSuccess;
}

// Runs the whole grid before returning.  `args` holds one pointer per kernel parameter, as for
// the real cudaLaunchKernel; the kernel's own parameter types say how to read them.
template <class... A>
inline cudaError_t cudaLaunchKernel(void (*kernel)(A...), dim3 grid, dim3 block, void **args,
                                    size_t shared_bytes = 0, cudaStream_t stream = nullptr, bool cooperative = false) {
  (void)stream;
  typedef std::tuple<typename std::decay<A>::type...> Tup;
  struct Call { void (*k)(A...); Tup t; } call{kernel, n2c_cpu::unpack<Tup>(args, std::index_sequence_for<A...>())};
  return n2c_cpu::launch(reinterpret_cast<n2c_cpu::AnyFn>(kernel), grid, block, shared_bytes,
                         [](void *p) { Call *c = static_cast<Call *>(p); std::apply(c->k, c->t); }, &call,
                         cooperative);
}

// ---- cooperative launches --------------------------------------------------------------------
// The CPU runtime stands for an H200-sized device: 132 SMs, each holding at most 32 blocks, 64 warps and
// 228 KiB of shared memory (registers cannot be known here, so the GPU may hold fewer).
enum : int { kCpuSms = 132 };
inline cudaError_t cudaGetDevice(int *device) { *device = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int) {
  *value = attr == cudaDevAttrMultiProcessorCount ? int(kCpuSms) : 0;
  return cudaSuccess;
}
template <class F>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, F *, int threads, size_t shared_bytes) {
  const int warps = (threads + 31) / 32;
  int per_sm = warps > 0 ? 64 / warps : 0;
  per_sm = per_sm < 32 ? per_sm : 32;
  if (shared_bytes && int(233472 / shared_bytes) < per_sm) per_sm = int(233472 / shared_bytes);
  *blocks = per_sm;
  return cudaSuccess;
}
template <class... A>
inline cudaError_t cudaLaunchCooperativeKernel(void (*kernel)(A...), dim3 grid, dim3 block, void **args,
                                               size_t shared_bytes = 0, cudaStream_t stream = nullptr) {
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(block.x * block.y * block.z), shared_bytes);
  const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z, limit = 1ull * per_sm * kCpuSms;
  if (blocks > limit) {
    n2c_cpu::Runtime &r = n2c_cpu::rt();
    std::snprintf(r.msg, sizeof r.msg, "a cooperative launch of %llu blocks exceeds the %llu that can be resident "
                  "at once (%d SMs x %d blocks of %u threads)", blocks, limit, int(kCpuSms), per_sm,
                  block.x * block.y * block.z);
    return r.last = cudaErrorCooperativeLaunchTooLarge;
  }
  return cudaLaunchKernel(kernel, grid, block, args, shared_bytes, stream, true);
}
namespace cooperative_groups {
struct grid_group {
  void sync(unsigned line = __builtin_LINE()) const { n2c_cpu::barrier(n2c_cpu::kGridSync, 0, line); }
};
inline grid_group this_grid() { return grid_group(); }
}  // namespace cooperative_groups
#ifdef N2C_CPU_CHECKED
#include "n2c_cpu_check.h"
#endif

#pragma GCC visibility pop

// ---- for the Python side (ctypes); per .so and per calling OS thread -------------------------
extern "C" {
__attribute__((visibility("default"))) const char *n2c_cpu_last_error_message() { return n2c_cpu::rt().msg; }
// 0..255: poison shared memory and stacks with that byte; -1: leave memory as it was.
__attribute__((visibility("default"))) void n2c_cpu_set_poison(int byte) { n2c_cpu::g_poison = byte < 0 ? -1 : byte & 0xFF; }
__attribute__((visibility("default"))) int n2c_cpu_static_poison_supported() {
  n2c_cpu::Runtime &r = n2c_cpu::rt();
  n2c_cpu::probe_tls(r);
  return r.tls_base != nullptr;
}
// Free this OS thread's runtime (e.g. before a worker thread ends); the next launch recreates it.
__attribute__((visibility("default"))) void n2c_cpu_release() { delete n2c_cpu::tls_rt, n2c_cpu::tls_rt = nullptr; }
}

#endif  // N2C_CPU_H
