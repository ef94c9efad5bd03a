"""identifiers in a model's code -> whether device code may use them: the CUDA device API the CPU runtime also has,
C++ keywords by what they can do, and the host library names the compiled file can see.

On the CPU runtime `__device__` expands to nothing, so device code can call any function the file's
headers declare (system, fopen, mmap, ...). Those names are not listed by hand: they are read from
the real headers (host_names(): g++ -E -dD on the runtime header, which includes everything the
emitted file includes), so a name a header adds is refused without anyone noticing it. A name in the
device API below is allowed even if a header also declares it (expf is in both).
"""

from __future__ import annotations

import os
import re

CUDA_QUALIFIERS = {"__global__", "__device__", "__shared__", "__constant__", "__forceinline__", "__noinline__",
                   "__restrict__"}
BUILTIN_VARIABLES = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"}
#: CUDA device functions that runtime/n2c_cpu.h also defines (tests/test_llm_check.py checks each is there)
RUNTIME_INTRINSICS = {
    "__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__threadfence",
    "__threadfence_block", "__threadfence_system", "__trap", "__syncwarp", "__activemask", "__all_sync",
    "__any_sync", "__uni_sync", "__ballot_sync", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
    "__shfl_xor_sync", "__match_any_sync", "__match_all_sync", "atomicAdd", "atomicSub", "atomicExch", "atomicMin",
    "atomicMax", "atomicAnd", "atomicOr", "atomicXor", "atomicInc", "atomicDec", "atomicCAS", "__popc", "__popcll",
    "__clz", "__clzll", "__ffs", "__ffsll", "__brev", "__brevll", "__int_as_float", "__float_as_int",
    "__uint_as_float", "__float_as_uint", "__longlong_as_double", "__double_as_longlong", "rsqrtf", "rsqrt", "__ldg",
    "min", "max",
}
_MATH_BASE = """acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2 exp10 expm1 fabs
    fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma llrint llround log log10 log1p log2 logb lrint lround
    modf nan nearbyint nextafter pow remainder remquo rint round scalbln scalbn sin sincos sinh sqrt tan tanh tgamma
    trunc j0 j1 jn y0 y1 yn""".split()
#: math functions of both CUDA and the C library, double and float (expf ...), plus the classification macros
MATH = set(_MATH_BASE) | {f + "f" for f in _MATH_BASE} | {"abs", "labs", "llabs", "isnan", "isinf", "isfinite",
                                                          "signbit"}
TYPE_NAMES = {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t",
              "ptrdiff_t", "intptr_t", "uintptr_t", "dim3", "uint3"}
CONSTANT_MACROS = set("""INFINITY NAN HUGE_VAL HUGE_VALF FLT_MAX FLT_MIN FLT_EPSILON FLT_TRUE_MIN FLT_MANT_DIG DBL_MAX
    DBL_MIN DBL_EPSILON DBL_TRUE_MIN DBL_MANT_DIG CHAR_BIT SCHAR_MIN SCHAR_MAX UCHAR_MAX CHAR_MIN CHAR_MAX SHRT_MIN
    SHRT_MAX USHRT_MAX INT_MIN INT_MAX UINT_MAX LONG_MIN LONG_MAX ULONG_MAX LLONG_MIN LLONG_MAX ULLONG_MAX INT8_MIN
    INT8_MAX INT16_MIN INT16_MAX INT32_MIN INT32_MAX INT64_MIN INT64_MAX UINT8_MAX UINT16_MAX UINT32_MAX UINT64_MAX
    SIZE_MAX M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2 M_SQRT1_2
    NULL""".split())
#: device printf and the memory functions CUDA device code has
LIBRARY = {"printf", "memcpy", "memset"}
#: the dynamic shared memory every kernel of the file shares (prompts/system.j2 states the convention)
DYNAMIC_SMEM = "n2c_dynamic_smem"
DEVICE_API = (CUDA_QUALIFIERS | BUILTIN_VARIABLES | RUNTIME_INTRINSICS | MATH | TYPE_NAMES | CONSTANT_MACROS
              | LIBRARY | {DYNAMIC_SMEM})

ARITHMETIC_WORDS = {"bool", "char", "short", "int", "long", "signed", "unsigned", "float", "double", "wchar_t",
                    "char16_t", "char32_t"}
#: keywords (and the alternative tokens) device code may use; where some of them may appear is check.py's business
ALLOWED_KEYWORDS = ARITHMETIC_WORDS | {
    "auto", "break", "case", "class", "const", "constexpr", "continue", "default", "do", "else", "enum", "false",
    "for", "goto", "if", "inline", "noexcept", "nullptr", "return", "sizeof", "static", "static_cast",
    "reinterpret_cast", "const_cast", "struct", "switch", "template", "true", "typedef", "typename", "union", "using",
    "void", "volatile", "while", "decltype", "alignof", "alignas", "static_assert",
    "and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor", "xor_eq",
}
REFUSED_KEYWORDS = {
    "asm": "inline assembly",
    "extern": "external declarations (they can name any host function)",
    "new": "dynamic allocation", "delete": "dynamic allocation",
    "operator": "operator functions (an `operator new` would replace the host's allocator)",
    "friend": "friend functions (they are namespace-scope functions)", "virtual": "virtual functions",
    "namespace": "namespaces", "this": "member functions", "public": "classes", "private": "classes",
    "protected": "classes", "mutable": "classes", "explicit": "constructors",
    "throw": "exceptions (host code)", "try": "exceptions (host code)", "catch": "exceptions (host code)",
    "typeid": "run-time type information (host code)", "dynamic_cast": "run-time type information (host code)",
    "thread_local": "thread-local storage", "register": "register storage", "export": "modules",
    "import": "modules", "module": "modules", "co_await": "coroutines", "co_return": "coroutines",
    "co_yield": "coroutines", "requires": "concepts", "concept": "concepts", "consteval": "C++20 declarations",
    "constinit": "C++20 declarations", "char8_t": "C++20 types", "main": "a main() function",
    "std": "the host standard library (std::); use CUDA's device functions (min, max, fminf, INFINITY, ...)",
}
RESERVED_HINTS = {
    "__attribute__": "attributes (__attribute__((constructor)) runs host code when the file is loaded)",
    "__declspec": "attributes", "__asm__": "inline assembly", "__asm": "inline assembly",
    "__host__": "host code: write __device__ functions only", "_Pragma": "pragmas other than #pragma unroll",
    "__pragma": "pragmas other than #pragma unroll", "__launch_bounds__": "launch bounds (the launcher is ours)",
    "__builtin_": "compiler built-ins (use CUDA's device functions)",
}
#: host functions refused even where a header in use does not declare them (nvcc's headers differ from g++'s)
HOST_FUNCTIONS = set("""system popen pclose execl execle execlp execv execve execvp execvpe fexecve fork vfork clone
    syscall posix_spawn posix_spawnp open openat creat fopen freopen fdopen tmpfile remove unlink unlinkat rename
    renameat mkdir rmdir chmod chown truncate ftruncate kill raise signal sigaction abort exit _Exit quick_exit atexit
    at_quick_exit getenv secure_getenv setenv putenv unsetenv environ dlopen dlsym dlclose mmap munmap mprotect
    malloc calloc realloc free aligned_alloc posix_memalign valloc socket connect bind listen accept send recv
    sendto recvfrom ptrace write read pread pwrite ioctl fcntl dup dup2 pipe getpid getppid setjmp longjmp
    fwrite fread fputs fputc fprintf fscanf puts putchar getchar gets fgets scanf sprintf snprintf vsprintf
    vsnprintf sscanf stdin stdout stderr perror errno""".split())
HOST_API = re.compile(r"(cuda|cu|nvrtc|cublas|cufft|curand|cusparse|cusolver|nccl)[A-Z]\w*\Z")


def refusal(name: str, host: frozenset) -> str | None:
    """Why device code may not use the identifier NAME (None: it may). HOST: host_names()."""
    if name in DEVICE_API or name in ALLOWED_KEYWORDS:
        return None
    if name in REFUSED_KEYWORDS:
        return REFUSED_KEYWORDS[name]
    if name.startswith("_"):
        hint = next((h for p, h in RESERVED_HINTS.items() if name == p or (p.endswith("_") and name.startswith(p))),
                    "a name beginning with '_' belongs to the compiler and its libraries")
        return hint
    if HOST_API.match(name):
        return "the CUDA host API (launches come from numba2cuda's templates)"
    if name in HOST_FUNCTIONS or name in host:
        return "a host library name: device code may use only CUDA's device API; rename a variable of that name"
    if name.startswith("n2c"):
        return "a name of numba2cuda's own code (only n2c::HELPER calls and n2c_dynamic_smem are yours to use)"
    return None


# --------------------------------------------------------------------------- names from the real headers

_SCAN = re.compile(r"""\.?\d[\w.]*|[A-Za-z_]\w*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[{}()<>;=]""")
_SKIP_WORDS = ALLOWED_KEYWORDS | set(REFUSED_KEYWORDS) | {"typedef", "extern"}


def host_names(cxx: str | None = None) -> frozenset:
    """Every macro and every name declared at global scope by the CPU runtime's header and what it includes (the
    emitted file's includes among them), read from `g++ -E -dD`; minus nothing: refusal() lets the device API
    through. Empty if the compiler cannot run (the CPU build would then fail anyway); a failure is not kept, so
    the next call tries again."""
    cxx = cxx or os.environ.get("CXX", "g++")
    if cxx not in _HOST_NAMES:
        names = _read_host_names(cxx)
        if not names:
            return names
        _HOST_NAMES[cxx] = names
    return _HOST_NAMES[cxx]


_HOST_NAMES: dict[str, frozenset] = {}


def _read_host_names(cxx: str) -> frozenset:
    from ..runtime.cpurun import HEADER
    from ..sandbox import ChildFailed, Limits, run_command

    # The translation unit is an empty stdin, not /dev/null: on some machines /dev/null is a regular file
    # holding what was last written to it (pytest's progress dots once made 's' a "host name"). stdout alone:
    # g++'s warnings are not declarations.
    try:
        out = run_command([cxx, "-std=c++17", "-E", "-dD", "-x", "c++", "-include", str(HEADER), "-"],
                          input_text="", limits=Limits(wall_seconds=120, cpu_seconds=60, address_space=4 << 30),
                          stderr=False)
    except (ChildFailed, OSError):
        return frozenset()
    if out.returncode != 0:
        return frozenset()
    return frozenset(declared_names(out.stdout))


def declared_names(preprocessed: str) -> set[str]:
    """Macros and global-scope names of preprocessed C++ (-dD output): every identifier outside parentheses and
    template headers at a scope that is the global one (file scope, extern "C" blocks, unscoped enums and
    anonymous namespaces), which over-approximates the declarations there. Names inside named namespaces,
    function bodies and classes are left out: device code cannot reach them unqualified."""
    names, code = set(), []
    for line in preprocessed.splitlines():
        if line.startswith("#"):
            m = re.match(r"#\s*define\s+([A-Za-z_]\w*)", line)
            if m:
                names.add(m.group(1))
            continue
        code.append(line)
    scopes: list[bool] = []  # per open brace: True if names declared in it are global
    parens = angle = 0
    recent: list[str] = []  # tokens since the last ; { }
    tparams: set[str] = set()  # the template parameters of the declaration being read
    for tok in _SCAN.findall("\n".join(code)):
        if tok == "(":
            parens += 1
        elif tok == ")":
            parens = max(0, parens - 1)
        elif parens:
            continue
        elif angle:
            angle += {"<": 1, ">": -1}.get(tok, 0)
            if tok[0].isalpha() or tok[0] == "_":
                tparams.add(tok)
        elif tok == "<" and recent[-1:] == ["template"]:
            angle = 1
        elif tok == "{":
            scopes.append(all(scopes) and _global_brace(recent))
            recent, tparams = [], set()
        elif tok == "}":
            if scopes:
                scopes.pop()
            recent, tparams = [], set()
        elif tok == ";":
            recent, tparams = [], set()
        elif tok[0].isalpha() or tok[0] == "_":
            recent.append(tok)
            if all(scopes) and tok not in _SKIP_WORDS and tok not in tparams:
                names.add(tok)
        else:
            recent.append(tok)
    return names


def _global_brace(before: list[str]) -> bool:
    """Whether a brace opened after the tokens BEFORE keeps global scope: extern "C" {, enum X {, namespace {."""
    if before[:1] == ["extern"]:
        return True
    if "enum" in before and "class" not in before and "struct" not in before[before.index("enum"):]:
        return True
    return before == ["namespace"] or before[-2:] == ["inline", "namespace"]
