"""VerifyResult -> the table a person reads, the verdict line, and JUnit XML for CI."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def case_label(c) -> str:
    parts = [f"seed={c.seed}", f"size={c.size}"]
    for p, v in c.params.items():
        parts.append(f"{p}={v}" + ("" if c.specialised.get(p) else " (generic)"))
    if c.distribution not in ("example", "cli"):
        parts.append(f"inputs={c.distribution}")
    return ",".join(parts)


def junit_xml(result) -> str:
    """JUnit XML: one testcase per kernel x seed x size x specialisation; failures carry the problems."""
    from xml.sax.saxutils import escape, quoteattr
    suite = Path(result.path).stem
    failures = sum(not c.ok for c in result.cases)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="numba2cuda verify" tests="{len(result.cases)}" failures="{failures}" errors="0">',
             f'  <testsuite name={quoteattr(suite)} tests="{len(result.cases)}" failures="{failures}" errors="0" '
             'skipped="0">',
             f'    <properties><property name="translation" value={quoteattr(result.source)}/>'
             f'<property name="device" value={quoteattr(result.device)}/></properties>']
    for c in result.cases:
        name = f"{c.kernel}[{case_label(c)}]"
        lines.append(f'    <testcase classname={quoteattr(suite + "." + c.kernel)} name={quoteattr(name)} '
                     f'time="{c.seconds:.3f}">')
        if not c.ok:
            detail = "\n".join([f"grid {c.griddim} block {c.blockdim} shared {c.shared} B",
                                f"reference: {c.reference}", *c.problems])
            lines.append(f'      <failure message={quoteattr(c.problems[0])} type="NotEquivalent">'
                         f'{escape(detail)}</failure>')
        lines.append(f'      <system-out>{escape("reference: " + c.reference)}</system-out>')
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>", ""]
    return "\n".join(lines)


def _num(v: float) -> str:
    return f"{v:.3g}" if np.isfinite(v) else str(v)


def _table(rows) -> list[str]:
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return ["  " + "  ".join(s.ljust(w) for s, w in zip(row, widths)).rstrip() for row in rows]


def _output_rows(outputs, prefix=""):
    rows = []
    for o in outputs:
        r = o.report
        rows.append((prefix + o.name, r.dtype, str(r.shape), "yes" if r.bit_identical else "no",
                     "-" if r.max_ulp is None else str(r.max_ulp), _num(r.max_abs), _num(r.max_rel),
                     f"{r.rtol:g}/{r.atol:g}", "ok" if r.ok else f"FAIL ({r.mismatches} differ)"))
    return rows


def format_case(c) -> list[str]:
    spec = "".join(f"  {p}={v}" + (" (specialised)" if c.specialised.get(p) else " (generic kernel)")
                   for p, v in c.params.items())
    inputs = "" if c.distribution in ("example", "cli") else f"  inputs {c.distribution}"
    lines = [f"{c.kernel}  seed {c.seed}  size {c.size}{spec}{inputs}  grid {c.griddim} block {c.blockdim} "
             f"shared {c.shared} B",
             f"  reference: {c.reference}"]
    rows = [("output", "dtype", "shape", "bit-identical", "max ULP", "max abs", "max rel", "rtol/atol", "result")]
    rows += _output_rows(c.outputs)
    rows += _output_rows(c.cpu_outputs, prefix="CPU runtime: ")
    lines += _table(rows)
    lines.append(f"  inputs unchanged: {'yes' if c.inputs_unchanged else 'NO'}; two runs ({c.runs}) "
                 f"bit-identical: {'yes' if c.runs_identical else 'NO'}")
    lines += [f"  FAIL: {p}" for p in c.problems]
    return lines


def format_report(result) -> str:
    lines = []
    for c in result.cases:
        lines += format_case(c)
    original = sum(c.reference.startswith("Numba original") for c in result.cases)
    if result.cases and original < len(result.cases):
        lines.append(f"reference: the Numba original for {original} of {len(result.cases)} cases; example()'s "
                     "NumPy expected for the rest (see each case)")
    if any(c.cpu_outputs for c in result.cases):
        lines.append(cpu_agreement_line(result))
    lines += [f"note: {n}" for n in result.notes]
    lines.append(verdict_line(result))
    return "\n".join(lines)


def cpu_agreement_line(result) -> str:
    """How far the CPU runtime is from the GPU original over all cases: max ULP per float output."""
    worst, exact = {}, True
    for c in result.cases:
        for o in c.cpu_outputs:
            exact &= o.report.bit_identical
            if o.report.max_ulp is not None:
                key = f"{c.kernel}.{o.name.split(' ')[0]}"
                worst[key] = max(worst.get(key, 0), o.report.max_ulp)
    ulps = ", ".join(f"{k} {v}" for k, v in sorted(worst.items())) or "no float outputs"
    ok = all(o.report.ok for c in result.cases for o in c.cpu_outputs)
    return (f"CPU runtime vs the GPU original: {'within tolerance' if ok else 'OUTSIDE tolerance'} in every case; "
            f"{'bit-identical everywhere' if exact else 'max ULP ' + ulps}")


def verdict_line(result) -> str:
    kernels = sorted({c.kernel for c in result.cases})
    nseeds = len({c.seed for c in result.cases})
    nsizes = len({str(c.size) for c in result.cases})
    nspec = len({tuple(sorted(c.params.items())) for c in result.cases if c.params})
    ndist = len({c.distribution for c in result.cases})
    what = (f"{', '.join(kernels)}; {len(result.cases)} case{'s' * (len(result.cases) != 1)}: {nseeds} "
            f"seed{'s' * (nseeds != 1)} x {nsizes} size{'s' * (nsizes != 1)}"
            + (f" x {nspec} specialisation values" if nspec else "")
            + (f", {ndist} input distributions" if ndist > 1 else "")
            + f"; translation: {result.source} on the {result.device}")
    if result.ok:
        return f"verdict: EQUIVALENT ({what})"
    if not result.cases:
        return f"verdict: NOT EQUIVALENT (no case could be checked: {'; '.join(result.notes) or 'none planned'})"
    bad = next(c for c in result.cases if not c.ok)
    failed = sum(not c.ok for c in result.cases)
    return (f"verdict: NOT EQUIVALENT ({what}): {failed} case{'s' * (failed != 1)} failed; first: {bad.kernel} "
            f"[{case_label(bad)}]: {bad.problems[0]}")
