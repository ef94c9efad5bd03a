// n2c_cpu_check.h -- the verifier's checks on the CPU runtime; n2c_cpu.h includes it when
// N2C_CPU_CHECKED is defined (cpurun.py's CHECK_FLAGS, the build `numba2cuda verify` runs).
//
// g++'s -fsanitize=thread instrumentation calls __tsan_readN(addr) / __tsan_writeN(addr) before every
// load and store of the kernel code -- each one, reads and writes told apart, none merged -- and the
// program may define them: the hooks at the end of this file (no sanitizer library is linked).  The
// runtime's own code is either not instrumented (N2C_NOSAN) or recognised by the address it touches.
//
// Memory safety.  An access is classified by address.  The calling thread's stack and the runtime's
// state are skipped.  The arrays are: the global arrays the caller registered (n2c_cpu_check_alloc
// puts each alone in a mapping, flush against the end, with guard zones around it), the static
// __shared__ arrays (cpurun.py reads their TLS offsets and sizes from the library's symbol table;
// checked builds page-align each, so an overrun lands in padding) and the dynamic shared memory the
// launch asked for.  An access partly or wholly outside its array -- in a guard zone, in the padding
// between shared arrays, past the dynamic bytes -- stops the launch, naming the array, the element
// and the thread.  Other addresses (constant tables, the launch's argument tuple) are not checked.
//
// Races.  Shadow memory keeps, per element of a global array and per byte of shared memory, the
// last writer and up to two readers as (thread, barrier generation, warp generation, atomic?).  Two
// accesses of different threads to one location, at least one a write and not both atomic, race
// unless a barrier ordered them: a __syncthreads of their block since the first (the generation
// moved on), or a __syncwarp of their warp.  Accesses from different blocks are never ordered (for
// shared memory they touch different copies).  A store of the value already there (many threads
// setting one flag) is deterministic on a GPU and is not reported: each store is resolved at the
// thread's next access or synchronisation, when the value it left can be read back.
//
// Order.  The scheduler runs a block's ready fibers forward (order 0), backward (1) or in an order
// drawn from the seed (2), so a result that depends on which thread runs first differs between runs.
//
// Faults.  With kSignals, SIGSEGV, SIGBUS, SIGFPE and SIGILL print one line naming the thread, the
// block and the cause to stderr (prefix "n2c-fault: ") and end the process: the verifier runs the
// library in a child process (translator/sandbox.py) and reads that line.
#ifndef N2C_CPU_CHECK_H
#define N2C_CPU_CHECK_H

// (<csignal> and <unistd.h> come from n2c_cpu.h, outside its hidden-visibility region)

namespace n2c_cpu {
namespace chk {

enum : int { kMemory = 1, kRaces = 2, kSignals = 4 };
enum Mode : int { kRead, kWrite, kAtomicRW };
enum Kind : unsigned char { kGlobalArray, kStaticShared, kDynamicShared, kRuntimeTls };
enum : unsigned char { fAtomic = 1, fSilent = 2 };
enum : int { kMaxArrays = 64, kMaxStatics = 256 };
enum : uintptr_t { kGuard = 4u << 20 };  // bytes of PROT_NONE on each side of a global array

struct Acc {  // one access: tid = launch-wide linear thread id + 1 (0: none)
  uint32_t tid, gen;
  uint16_t wgen;
  uint8_t flags, pad;
};
struct Cell { Acc w, r1, r2; };

struct Region {
  uintptr_t lo, hi;              // the array [lo, hi); static shared: TLS offsets until bound
  uintptr_t guard_lo, guard_hi;  // global arrays: the mapping around it
  size_t granule, offset, bytes; // bytes per shadow cell; static shared: offset in the TLS block, size
  Kind kind;
  char name[160];                // as messages name it: "global array out (float32[23, 21])"
  Cell *cells;
};

struct Pending {  // a thread's last store, resolved at its next access or synchronisation
  uintptr_t addr;
  unsigned n;
  unsigned char old[16];
  Region *reg;
  size_t c0, c1;
  bool conflict;
  Acc other;
  const char *other_did;
};

struct State {
  int flags = 0, order = 0;
  uint64_t seed = 0;
  Region arrays[kMaxArrays];
  int narrays = 0;
  Region statics[kMaxStatics];
  int nstatics = 0;
  Region dyn{};
  Runtime *rt = nullptr;
  bool in_fibers = false, tls_known = false;
  uintptr_t slots_lo = 0, slots_hi = 0, tls_lo = 0, tls_hi = 0;
  uint32_t gen = 0, block_lin = 0;
  uint16_t wgen[kMaxThreads / 32] = {};
  Fiber *running = nullptr;
  unsigned perm[kMaxThreads];
  Pending pend[kMaxThreads];
};
static State g;
static char g_altstack[1 << 16];

N2C_NOSAN inline unsigned fiber_index(const Fiber &f) { return static_cast<unsigned>(&f - g.rt->fib); }
N2C_NOSAN inline uint32_t me_of(const Fiber &f) { return g.block_lin * g.rt->n + fiber_index(f) + 1; }

// "thread (x,y,z) of block (x,y,z)" of a launch-wide id
N2C_NOSAN inline int describe_thread(char *buf, size_t len, uint32_t tid) {
  const Runtime &r = *g.rt;
  const uint32_t b = (tid - 1) / r.n, t = (tid - 1) % r.n;
  return std::snprintf(buf, len, "thread (%u,%u,%u) of block (%u,%u,%u)", t % r.block.x,
                       t / r.block.x % r.block.y, t / (r.block.x * r.block.y), b % r.grid.x,
                       b / r.grid.x % r.grid.y, b / (r.grid.x * r.grid.y));
}

N2C_NOSAN inline int describe_place(char *buf, size_t len, const Region &R, uintptr_t a) {
  const long long off = static_cast<long long>(a) - static_cast<long long>(R.lo);
  if (R.kind == kGlobalArray) {
    const long long e = off >= 0 ? off / static_cast<long long>(R.granule)
                                 : -((-off + static_cast<long long>(R.granule) - 1) / static_cast<long long>(R.granule));
    return std::snprintf(buf, len, "element %lld of %s", e, R.name);
  }
  return std::snprintf(buf, len, "byte %lld of %s", off, R.name);
}

// Stop the calling fiber for good: the launch fails with MSG (the first failure's message wins).
N2C_NOSAN [[noreturn]] inline void stop(Fiber &f, const char *msg) {
  Runtime &r = *g.rt;
  r.fail("%s", msg);
  g.pend[fiber_index(f)].n = 0;
  ctx_switch(&f.ctx, &r.sched);
  __builtin_trap();  // never resumed
}

N2C_NOSAN [[noreturn]] inline void out_of_bounds(Fiber &f, const Region &R, uintptr_t a, size_t n, int mode,
                                                 const char *where_msg) {
  char msg[600], who[96], place[240];
  describe_thread(who, sizeof who, me_of(f));
  describe_place(place, sizeof place, R, a);
  std::snprintf(msg, sizeof msg, "out-of-bounds access: %s %s %zu byte%s at %s: %s", who,
                mode == kRead ? "reads" : "writes", n, n == 1 ? "" : "s", place, where_msg);
  stop(f, msg);
}

N2C_NOSAN inline bool ordered(const Acc &p, uint32_t me, const Region &R) {
  if (p.tid == 0 || p.tid == me) return true;
  const unsigned nt = g.rt->n;
  if ((p.tid - 1) / nt != (me - 1) / nt) return R.kind != kGlobalArray;  // shared: another block's copy
  if (p.gen != g.gen) return true;
  const unsigned pw = (p.tid - 1) % nt / 32, mw = (me - 1) % nt / 32;
  return pw == mw && p.wgen != g.wgen[mw];
}

N2C_NOSAN [[noreturn]] inline void report_race(Fiber &f, const Region &R, uintptr_t a, const char *did,
                                               const Acc &other, const char *other_did) {
  char msg[700], me[96], them[96], place[240];
  describe_thread(me, sizeof me, me_of(f));
  describe_thread(them, sizeof them, other.tid);
  describe_place(place, sizeof place, R, a);
  const bool blocks = (other.tid - 1) / g.rt->n != (me_of(f) - 1) / g.rt->n;
  std::snprintf(msg, sizeof msg, "data race on %s: %s %s it and %s %s it with no %s between them%s", place, me,
                did, them, other_did, blocks ? "synchronisation (different blocks)" : "barrier",
                (other.flags & fAtomic) ? " (one of them atomically)" : "");
  stop(f, msg);
}

N2C_NOSAN inline void resolve(Fiber &f) {
  Pending &p = g.pend[fiber_index(f)];
  if (!p.n) return;
  const unsigned n = p.n;
  p.n = 0;
  bool silent = n <= sizeof p.old;
  for (unsigned i = 0; silent && i < n; ++i) silent = reinterpret_cast<const unsigned char *>(p.addr)[i] == p.old[i];
  if (silent) {
    const uint32_t me = me_of(f);
    for (size_t c = p.c0; c <= p.c1; ++c)
      if (p.reg->cells[c].w.tid == me) p.reg->cells[c].w.flags |= fSilent;
    return;
  }
  if (p.conflict) report_race(f, *p.reg, p.addr, "writes", p.other, p.other_did);
}

N2C_NOSAN inline void track(Fiber &f, Region &R, uintptr_t a, size_t n, int mode) {
  const uint32_t me = me_of(f);
  const unsigned w = fiber_index(f) / 32;
  const Acc cur{me, g.gen, g.wgen[w], static_cast<uint8_t>(mode == kAtomicRW ? fAtomic : 0), 0};
  const size_t c0 = (a - R.lo) / R.granule, c1 = (a + n - 1 - R.lo) / R.granule;
  Pending &p = g.pend[fiber_index(f)];
  if (mode != kRead) {
    p.addr = a, p.n = static_cast<unsigned>(n), p.reg = &R, p.c0 = c0, p.c1 = c1, p.conflict = false;
    for (size_t i = 0; i < n && i < sizeof p.old; ++i) p.old[i] = reinterpret_cast<const unsigned char *>(a)[i];
  }
  for (size_t c = c0; c <= c1; ++c) {
    Cell &C = R.cells[c];
    if (mode == kRead) {
      if (!ordered(C.w, me, R) && !(C.w.flags & fSilent)) report_race(f, R, a, "reads", C.w, "wrote");
      if (ordered(C.r1, me, R)) C.r1 = cur;
      else if (C.r1.tid != me && ordered(C.r2, me, R)) C.r2 = cur;
      continue;
    }
    const bool atomic = mode == kAtomicRW;
    const Acc *other = nullptr;
    const char *did = nullptr;
    if (!ordered(C.w, me, R) && !(atomic && (C.w.flags & fAtomic))) other = &C.w, did = "wrote";
    else if (!ordered(C.r1, me, R) && !(atomic && (C.r1.flags & fAtomic))) other = &C.r1, did = "read";
    else if (!ordered(C.r2, me, R) && !(atomic && (C.r2.flags & fAtomic))) other = &C.r2, did = "read";
    if (other && !p.conflict) p.conflict = true, p.other = *other, p.other_did = did;
    C.w = cur;
    C.r1 = C.r2 = Acc{};
  }
}

N2C_NOSAN inline void access(uintptr_t a, size_t n, int mode) {
  if (!g.in_fibers || n == 0) return;
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (sp < g.slots_lo || sp >= g.slots_hi) return;  // runtime code on the OS thread's stack
  const uintptr_t base = sp & ~(kSlotBytes - 1);
  if (a - base < kSlotBytes) return;  // the thread's own stack: its locals
  Runtime &r = *g.rt;
  if (a - reinterpret_cast<uintptr_t>(&r) < sizeof(Runtime)) return;  // threadIdx, blockIdx, ...
  Fiber &f = *reinterpret_cast<Slot *>(base)->fiber;
  resolve(f);
  Region *hit = nullptr;
  for (int i = 0; i < g.narrays && !hit; ++i) {
    Region &R = g.arrays[i];
    if (a < R.guard_lo || a >= R.guard_hi) continue;
    if (a >= R.lo && a + n <= R.hi) hit = &R;
    else out_of_bounds(f, R, a, n, mode, a < R.lo ? "before its start" : "past its end");
  }
  if (!hit && a >= g.tls_lo && a < g.tls_hi) {
    if (a >= g.dyn.lo && a < g.dyn.guard_hi) {
      if (a + n > g.dyn.hi) out_of_bounds(f, g.dyn, a, n, mode, "past the dynamic shared memory the launch asked for");
      hit = &g.dyn;
    }
    const Region *before = nullptr, *after = nullptr;
    for (int i = 0; i < g.nstatics && !hit; ++i) {
      Region &R = g.statics[i];
      if (a >= R.lo && a < R.hi) {
        if (R.kind == kRuntimeTls) return;
        if (a + n > R.hi) out_of_bounds(f, R, a, n, mode, "past its end");
        hit = &R;
      } else if (R.kind == kStaticShared && R.hi <= a && (!before || R.hi > before->hi)) before = &R;
      else if (R.kind == kStaticShared && R.lo > a && (!after || R.lo < after->lo)) after = &R;
    }
    if (!hit) {
      if (!g.tls_known) return;
      if (before && (!after || a - before->hi <= after->lo - a)) out_of_bounds(f, *before, a, n, mode, "past its end");
      if (after) out_of_bounds(f, *after, a, n, mode, "before its start");
      if (g.dyn.lo > a) out_of_bounds(f, g.dyn, a, n, mode, "before the dynamic shared memory");
      return;
    }
  }
  if (!hit || !(g.flags & kRaces) || !hit->cells) return;
  track(f, *hit, a, n, mode);
}

N2C_NOSAN inline void free_region(Region &R) {
  std::free(R.cells);
  R.cells = nullptr;
  if (R.kind == kGlobalArray && R.guard_lo) munmap(reinterpret_cast<void *>(R.guard_lo), R.guard_hi - R.guard_lo);
  R.guard_lo = R.guard_hi = 0;
}

// ---- the scheduler's calls (see N2C_CHK in n2c_cpu.h) -----------------------------------------
N2C_NOSAN void launch_begin(Runtime &r, char *slots) {
  if (!g.flags) return;
  g.rt = &r;
  g.slots_lo = reinterpret_cast<uintptr_t>(slots);
  g.slots_hi = g.slots_lo + static_cast<uintptr_t>(r.n) * kSlotBytes;
  // A page either side of the TLS block: an overrun of its first or last __shared__ array lands there (the
  // hook stops it before it touches the memory, which is not the block's).
  g.tls_lo = reinterpret_cast<uintptr_t>(r.tls_base) - kPage;
  g.tls_hi = reinterpret_cast<uintptr_t>(r.tls_base) + (r.tls_size + kPage - 1) / kPage * kPage + kPage;
  g.tls_known = r.tls_base != nullptr && g.nstatics > 0;
  for (int i = 0; i < g.nstatics; ++i) {
    Region &R = g.statics[i];
    R.lo = reinterpret_cast<uintptr_t>(r.tls_base) + R.offset, R.hi = R.lo + R.bytes, R.guard_lo = R.lo, R.guard_hi = R.hi;
    if (R.cells) std::memset(R.cells, 0, R.bytes * sizeof(Cell));
  }
  unsigned char *d = n2c_dynamic_smem;
  asm("" : "+r"(d));
  g.dyn.kind = kDynamicShared, g.dyn.granule = 1;
  g.dyn.lo = reinterpret_cast<uintptr_t>(d), g.dyn.hi = g.dyn.lo + r.shared_bytes;
  g.dyn.guard_lo = g.dyn.lo, g.dyn.guard_hi = g.dyn.lo + N2C_CPU_DYN_SMEM_BUF;
  std::snprintf(g.dyn.name, sizeof g.dyn.name, "the dynamic shared memory (%zu bytes)", r.shared_bytes);
  g.dyn.cells = (g.flags & kRaces) && r.shared_bytes ? static_cast<Cell *>(std::calloc(r.shared_bytes, sizeof(Cell))) : nullptr;
  for (unsigned i = 0; i < r.n; ++i) g.pend[i].n = 0;
  g.gen = 0;
  g.in_fibers = true;
}

N2C_NOSAN void launch_end(Runtime &) {
  if (!g.flags) return;
  g.in_fibers = false;
  g.running = nullptr;
  std::free(g.dyn.cells);
  g.dyn.cells = nullptr;
}

N2C_NOSAN void block_begin(Runtime &r) {
  if (!g.flags) return;
  g.block_lin = r.bid.x + r.grid.x * (r.bid.y + r.grid.y * r.bid.z);
  ++g.gen;
  for (unsigned i = 0; i < r.n; ++i) g.perm[i] = g.order == 1 ? r.n - 1 - i : i;
  if (g.order == 2) {  // Fisher-Yates with splitmix64, per block
    uint64_t s = g.seed ^ (0x9E3779B97F4A7C15ull * (g.block_lin + 1));
    for (unsigned i = r.n; i > 1; --i) {
      s += 0x9E3779B97F4A7C15ull;
      uint64_t z = s;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull, z = (z ^ (z >> 27)) * 0x94D049BB133111EBull, z ^= z >> 31;
      const unsigned j = static_cast<unsigned>(z % i), t = g.perm[i - 1];
      g.perm[i - 1] = g.perm[j], g.perm[j] = t;
    }
  }
}

N2C_NOSAN unsigned pick(Runtime &, unsigned k) { return g.flags && g.order ? g.perm[k] : k; }
N2C_NOSAN void run(Fiber &f) { g.running = &f; }
N2C_NOSAN void yield(Fiber &f) { if (g.in_fibers) resolve(f); }
N2C_NOSAN void barrier_done(Runtime &) { ++g.gen; }
N2C_NOSAN void warp_done(Runtime &, unsigned w) { ++g.wgen[w]; }
N2C_NOSAN int suspend() { const int flags = g.flags; g.flags = 0; return flags; }
N2C_NOSAN void resume(int flags) { g.flags = flags; }
N2C_NOSAN void atomic_access(const volatile void *addr, unsigned bytes) {
  access(reinterpret_cast<uintptr_t>(addr), bytes, kAtomicRW);
}

// ---- faults -----------------------------------------------------------------------------------
N2C_NOSAN inline void on_signal(int sig, siginfo_t *si, void *) {
  char msg[900];
  int k = std::snprintf(msg, sizeof msg, "n2c-fault: ");
  if (g.in_fibers && g.running && g.rt) {
    k += describe_thread(msg + k, sizeof msg - k, me_of(*g.running));
    k += std::snprintf(msg + k, sizeof msg - k, ": ");
  }
  const uintptr_t a = reinterpret_cast<uintptr_t>(si->si_addr);
  const char *what = sig == SIGFPE ? "SIGFPE (an integer division by zero or overflow)"
                   : sig == SIGILL ? "SIGILL (an illegal instruction, e.g. __trap)"
                   : sig == SIGBUS ? "SIGBUS (an invalid memory access)" : "SIGSEGV (an invalid memory access)";
  k += std::snprintf(msg + k, sizeof msg - k, "%s", what);
  if (sig == SIGSEGV || sig == SIGBUS) {
    k += std::snprintf(msg + k, sizeof msg - k, " at address %#lx", static_cast<unsigned long>(a));
    for (int i = 0; i < g.narrays; ++i) {
      const Region &R = g.arrays[i];
      if (a >= R.guard_lo && a < R.guard_hi) {
        char place[240];
        describe_place(place, sizeof place, R, a);
        k += std::snprintf(msg + k, sizeof msg - k, ", %s (%s)", place, a < R.lo ? "before its start" : "past its end");
      }
    }
    if (g.in_fibers && a >= g.slots_lo && a < g.slots_hi && (a - g.slots_lo) % kSlotBytes < 2 * kPage)
      k += std::snprintf(msg + k, sizeof msg - k, ", the stack's guard page: a stack overflow (over ~500 KiB of locals)");
  }
  if (k < static_cast<int>(sizeof msg) - 1) msg[k++] = '\n';
  ssize_t unused = write(2, msg, static_cast<size_t>(k));
  (void)unused;
  _exit(86);
}

N2C_NOSAN inline void install_signals() {
  static bool done = false;
  if (done) return;
  done = true;
  stack_t ss{};
  ss.ss_sp = g_altstack, ss.ss_size = sizeof g_altstack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(sig, &sa, nullptr);
}

}  // namespace chk
}  // namespace n2c_cpu

// ---- for the Python side (cpurun.run_case) ----------------------------------------------------
extern "C" {
// Start a checked launch sequence: FLAGS = kMemory | kRaces | kSignals, ORDER 0 forward, 1 backward,
// 2 drawn from SEED.  Forgets the arrays registered before.
__attribute__((visibility("default"))) N2C_NOSAN void n2c_cpu_check_begin(int flags, int order, unsigned long long seed) {
  using namespace n2c_cpu::chk;
  for (int i = 0; i < g.narrays; ++i) free_region(g.arrays[i]);
  for (int i = 0; i < g.nstatics; ++i) std::free(g.statics[i].cells), g.statics[i].cells = nullptr;
  g.narrays = g.nstatics = 0;
  g.flags = flags, g.order = order, g.seed = seed;
  if (flags & kSignals) install_signals();
}

// A global array of BYTES for a kernel argument, alone in its mapping and flush against its end,
// with guard zones around it; NAME as messages say it.  Null when out of memory or slots.
__attribute__((visibility("default"))) N2C_NOSAN void *n2c_cpu_check_alloc(size_t bytes, size_t itemsize, const char *name) {
  using namespace n2c_cpu::chk;
  if (g.narrays == kMaxArrays) return nullptr;
  const size_t page = n2c_cpu::kPage, data = (bytes + page - 1) / page * page + page;
  char *map = static_cast<char *>(mmap(nullptr, data + 2 * kGuard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (map == MAP_FAILED) return nullptr;
  if (mprotect(map + kGuard, data, PROT_READ | PROT_WRITE) != 0) return munmap(map, data + 2 * kGuard), nullptr;
  Region &R = g.arrays[g.narrays++];
  R = Region{};
  R.kind = kGlobalArray;
  R.guard_lo = reinterpret_cast<uintptr_t>(map), R.guard_hi = R.guard_lo + data + 2 * kGuard;
  R.hi = R.guard_lo + kGuard + data, R.lo = R.hi - bytes;
  R.granule = itemsize ? itemsize : 1;
  std::snprintf(R.name, sizeof R.name, "%s", name);
  // Races in arrays of up to 8 M elements (288 MB of shadow); verify's cases are far smaller, a bench size is not.
  if ((g.flags & kRaces) && bytes / R.granule <= (8u << 20))
    R.cells = static_cast<Cell *>(std::calloc(bytes / R.granule + 1, sizeof(Cell)));
  return reinterpret_cast<void *>(R.lo);
}

// A thread_local of the library at OFFSET in its TLS block: a static __shared__ array (USER) or
// the runtime's own (accesses to it are not checked).
__attribute__((visibility("default"))) N2C_NOSAN void n2c_cpu_check_tls(size_t offset, size_t bytes, const char *name, int user) {
  using namespace n2c_cpu::chk;
  if (g.nstatics == kMaxStatics || !bytes) return;
  Region &R = g.statics[g.nstatics++];
  R = Region{};
  R.kind = user ? kStaticShared : kRuntimeTls;
  R.offset = offset, R.bytes = bytes, R.granule = 1;
  std::snprintf(R.name, sizeof R.name, "%s", name);
  if (user && (g.flags & kRaces)) R.cells = static_cast<Cell *>(std::calloc(bytes, sizeof(Cell)));
}

__attribute__((visibility("default"))) N2C_NOSAN void n2c_cpu_check_end() {
  n2c_cpu_check_begin(0, 0, 0);
}

// The instrumentation's entry points: g++ -fsanitize=thread calls them, and the program defines them
// (no sanitizer library is linked).  Atomic builtins in instrumented code become __tsan_atomic* calls.
N2C_NOSAN void __tsan_init() {}
N2C_NOSAN void __tsan_func_entry(void *) {}
N2C_NOSAN void __tsan_func_exit() {}
#define N2C_HOOK(N)                                                                                             \
  N2C_NOSAN void __tsan_read##N(void *a) { n2c_cpu::chk::access(reinterpret_cast<uintptr_t>(a), N, n2c_cpu::chk::kRead); } \
  N2C_NOSAN void __tsan_write##N(void *a) { n2c_cpu::chk::access(reinterpret_cast<uintptr_t>(a), N, n2c_cpu::chk::kWrite); } \
  N2C_NOSAN void __tsan_unaligned_read##N(void *a) { n2c_cpu::chk::access(reinterpret_cast<uintptr_t>(a), N, n2c_cpu::chk::kRead); } \
  N2C_NOSAN void __tsan_unaligned_write##N(void *a) { n2c_cpu::chk::access(reinterpret_cast<uintptr_t>(a), N, n2c_cpu::chk::kWrite); } \
  N2C_NOSAN void __tsan_volatile_read##N(void *a) { n2c_cpu::chk::access(reinterpret_cast<uintptr_t>(a), N, n2c_cpu::chk::kRead); } \
  N2C_NOSAN void __tsan_volatile_write##N(void *a) { n2c_cpu::chk::access(reinterpret_cast<uintptr_t>(a), N, n2c_cpu::chk::kWrite); }
N2C_HOOK(1) N2C_HOOK(2) N2C_HOOK(4) N2C_HOOK(8) N2C_HOOK(16)
#undef N2C_HOOK
N2C_NOSAN void __tsan_read_range(void *a, unsigned long n) { n2c_cpu::chk::access(reinterpret_cast<uintptr_t>(a), n, n2c_cpu::chk::kRead); }
N2C_NOSAN void __tsan_write_range(void *a, unsigned long n) { n2c_cpu::chk::access(reinterpret_cast<uintptr_t>(a), n, n2c_cpu::chk::kWrite); }
N2C_NOSAN void __tsan_vptr_update(void **, void *) {}
N2C_NOSAN void __tsan_vptr_read(void **) {}
N2C_NOSAN void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
N2C_NOSAN void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
// Fibers never interleave inside an atomic builtin: each is one atomic access of its location.
#define N2C_TSAN_ATOMIC(N, T)                                                                                 \
  N2C_NOSAN T __tsan_atomic##N##_load(const volatile T *a, int) {                                            \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); return *a; }                                                 \
  N2C_NOSAN void __tsan_atomic##N##_store(volatile T *a, T v, int) { n2c_cpu::chk::atomic_access(a, sizeof(T)); *a = v; } \
  N2C_NOSAN T __tsan_atomic##N##_exchange(volatile T *a, T v, int) {                                         \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); T o = *a; *a = v; return o; }                                \
  N2C_NOSAN T __tsan_atomic##N##_fetch_add(volatile T *a, T v, int) {                                        \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); T o = *a; *a = static_cast<T>(o + v); return o; }           \
  N2C_NOSAN T __tsan_atomic##N##_fetch_sub(volatile T *a, T v, int) {                                        \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); T o = *a; *a = static_cast<T>(o - v); return o; }           \
  N2C_NOSAN T __tsan_atomic##N##_fetch_and(volatile T *a, T v, int) {                                        \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); T o = *a; *a = static_cast<T>(o & v); return o; }           \
  N2C_NOSAN T __tsan_atomic##N##_fetch_or(volatile T *a, T v, int) {                                         \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); T o = *a; *a = static_cast<T>(o | v); return o; }           \
  N2C_NOSAN T __tsan_atomic##N##_fetch_xor(volatile T *a, T v, int) {                                        \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); T o = *a; *a = static_cast<T>(o ^ v); return o; }           \
  N2C_NOSAN int __tsan_atomic##N##_compare_exchange_strong(volatile T *a, T *c, T v, int, int) {             \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); if (*a == *c) { *a = v; return 1; } *c = *a; return 0; }    \
  N2C_NOSAN int __tsan_atomic##N##_compare_exchange_weak(volatile T *a, T *c, T v, int, int) {               \
    return __tsan_atomic##N##_compare_exchange_strong(a, c, v, 0, 0); }                                     \
  N2C_NOSAN T __tsan_atomic##N##_compare_exchange_val(volatile T *a, T c, T v, int, int) {                   \
    n2c_cpu::chk::atomic_access(a, sizeof(T)); T o = *a; if (o == c) *a = v; return o; }
N2C_TSAN_ATOMIC(8, unsigned char) N2C_TSAN_ATOMIC(16, unsigned short) N2C_TSAN_ATOMIC(32, unsigned int)
N2C_TSAN_ATOMIC(64, unsigned long long)
#undef N2C_TSAN_ATOMIC
}

#endif  // N2C_CPU_CHECK_H
