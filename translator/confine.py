"""a process about to load untrusted native code -> one that cannot start programs, write files or signal others.

The last layer under the allow-list (llm/check.py) and the sandboxed child (sandbox.py): a seccomp
filter, installed in the child right before it loads a library built from a model's code, so that
whatever the library does when loaded or run (a constructor, a kernel calling libc) cannot execute a
program (execve, fork, clone of a process: the process is killed with SIGSYS), open a file for
writing, rename, remove or create files (EPERM), connect to the network or trace another process
(SIGSYS), or signal any process but itself (EPERM). Reading stays allowed (the loader needs it), so
secrets must simply not be there: the child's environment is scrubbed and it is not a fork of a
process that holds the key. Irreversible and inherited by threads (TSYNC); only on Linux x86-64 and
aarch64: elsewhere confine() returns False and the other layers stand alone.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys

ENV = "NUMBA2CUDA_CONFINE"  # "1": the CPU runtime confines a process before it loads a library (runtime/cpurun.py)

_ARCH = {  # machine -> (AUDIT_ARCH, seccomp syscall, {name: number})
    "x86_64": (0xC000003E, 317, dict(
        open=2, creat=85, openat=257, openat2=437, rename=82, renameat=264, renameat2=316, unlink=87, unlinkat=263,
        mkdir=83, mkdirat=258, rmdir=84, link=86, linkat=265, symlink=88, symlinkat=266, chmod=90, fchmod=91,
        fchmodat=268, fchmodat2=452, chown=92, fchown=93, lchown=94, fchownat=260, truncate=76, mknod=133,
        mknodat=259, execve=59, execveat=322, fork=57, vfork=58, clone=56, clone3=435, socket=41, socketpair=53,
        connect=42, bind=49, ptrace=101, process_vm_readv=310, process_vm_writev=311, kill=62, tkill=200,
        tgkill=234, pidfd_send_signal=424, pidfd_open=434, pidfd_getfd=438)),
    "aarch64": (0xC00000B7, 277, dict(
        openat=56, openat2=437, renameat=38, renameat2=276, unlinkat=35, mkdirat=34, linkat=37, symlinkat=36,
        fchmod=52, fchmodat=53, fchmodat2=452, fchown=55, fchownat=54, truncate=45, mknodat=33, execve=221,
        execveat=281, clone=220, clone3=435, socket=198, socketpair=199, connect=203, bind=200, ptrace=117,
        process_vm_readv=270, process_vm_writev=271, kill=129, tkill=130, tgkill=131, pidfd_send_signal=424,
        pidfd_open=434, pidfd_getfd=438)),
}
KILLED = ("execve", "execveat", "fork", "vfork", "socket", "socketpair", "connect", "bind", "ptrace",
          "process_vm_readv", "process_vm_writev", "pidfd_getfd")
REFUSED = ("creat", "openat2", "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir",
           "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown",
           "lchown", "fchownat", "truncate", "mknod", "mknodat", "tkill", "pidfd_send_signal", "pidfd_open")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
CLONE_THREAD = 0x00010000

_RET_KILL_PROCESS, _RET_ALLOW, _RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_applied = False


def _arg_low(i: int) -> int:
    """Offset of the low 32 bits of syscall argument I in struct seccomp_data (little endian)."""
    return 16 + 8 * i


def _program(audit_arch: int, nrs: dict) -> list[tuple]:
    """The filter as (op, k, true label, false label) with labels; see _assemble."""
    prog = [("ld", 4), ("jeq", audit_arch, None, "kill"), ("ld", 0)]
    if audit_arch == 0xC000003E:
        prog.append(("jge", 0x40000000, "kill", None))  # the x32 ABI: another numbering, not filtered here
    prog += [("jeq", nrs[n], "kill", None) for n in KILLED if n in nrs]
    prog += [("jeq", nrs[n], "eperm", None) for n in REFUSED if n in nrs]
    prog.append(("jeq", nrs["clone3"], "enosys", None))  # glibc falls back to clone, whose flags can be read
    checks = [("open", 1, "open_flags"), ("openat", 2, "open_flags"), ("clone", 0, "clone_flags"),
              ("kill", 0, "own_pid"), ("tgkill", 0, "own_pid")]
    for name, arg, label in checks:
        if name in nrs:
            prog.append(("jeq", nrs[name], f"{label}_{arg}", None))
    prog.append(("ret", _RET_ALLOW))
    for name, arg, label in checks:
        if name not in nrs or any(p == ("label", f"{label}_{arg}") for p in prog):
            continue
        prog += [("label", f"{label}_{arg}"), ("ld", _arg_low(arg))]
        if label == "open_flags":
            prog += [("jset", WRITE_FLAGS, "eperm", "allow")]
        elif label == "clone_flags":
            prog += [("jset", CLONE_THREAD, "allow", "kill")]
        else:
            prog += [("jeq", os.getpid(), "allow", None), ("jeq", 0, "allow", "eperm")]
    prog += [("label", "allow"), ("ret", _RET_ALLOW), ("label", "kill"), ("ret", _RET_KILL_PROCESS),
             ("label", "eperm"), ("ret", _RET_ERRNO | errno.EPERM), ("label", "enosys"),
             ("ret", _RET_ERRNO | errno.ENOSYS)]
    return prog


def _assemble(prog: list[tuple]) -> bytes:
    """struct sock_filter[] of PROG: labels resolved to the 8-bit forward jumps BPF takes."""
    at, n = {}, 0
    for ins in prog:
        if ins[0] == "label":
            at[ins[1]] = n
        else:
            n += 1
    out, pc = [], 0
    for ins in prog:
        op = ins[0]
        if op == "label":
            continue
        if op == "ld":
            out.append(struct.pack("<HBBI", _LD_ABS_W, 0, 0, ins[1]))
        elif op == "ret":
            out.append(struct.pack("<HBBI", _RET, 0, 0, ins[1]))
        else:
            code = {"jeq": _JEQ, "jge": _JGE, "jset": _JSET}[op]
            jt, jf = (0 if lab is None else at[lab] - pc - 1 for lab in ins[2:4])
            if not (0 <= jt <= 255 and 0 <= jf <= 255):
                raise ValueError("seccomp filter jump out of range")
            out.append(struct.pack("<HBBI", code, jt, jf, ins[1] & 0xFFFFFFFF))
        pc += 1
    return b"".join(out)


def confine() -> bool:
    """Install the filter in this process (all its threads), once; False where it cannot be installed."""
    global _applied
    if _applied:
        return True
    arch = _ARCH.get(platform.machine())
    if not sys.platform.startswith("linux") or arch is None:
        return False
    audit_arch, seccomp_nr, nrs = arch
    filt = _assemble(_program(audit_arch, nrs))
    libc = ctypes.CDLL(None, use_errno=True)

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    prog = Prog(len(filt) // 8, filt)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: required to filter without privileges
        return False
    # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog): every thread, not just this one
    if libc.syscall(ctypes.c_long(seccomp_nr), ctypes.c_uint(1), ctypes.c_uint(1), ctypes.byref(prog)) != 0:
        return False
    _applied = True
    return True


def requested() -> bool:
    return os.environ.get(ENV) == "1"
