"""VerifyResult -> what a person reads (a compact summary, or every case with -v), the verdict line, and JUnit
XML for CI (a NOT EQUIVALENT case is a failure, an UNDECIDED one is skipped with its reason)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .result import NOT_EQUIVALENT, UNDECIDED


def case_label(c) -> str:
    parts = ([] if c.example in ("example", "cli") else [c.example]) + [f"seed={c.seed}", f"size={c.size}"]
    for p, v in c.params.items():
        parts.append(f"{p}={v}" + ("" if c.specialised.get(p) else " (generic)"))
    if c.distribution not in ("example", "cli"):
        parts.append(f"inputs={c.distribution}")
    return ",".join(parts)


def junit_xml(result) -> str:
    """JUnit XML: one testcase per case; NOT EQUIVALENT cases fail, UNDECIDED ones are skipped."""
    from xml.sax.saxutils import escape, quoteattr
    suite = Path(result.path).stem
    failures = sum(c.verdict == NOT_EQUIVALENT for c in result.cases) + bool(result.problems)
    skipped = sum(c.verdict == UNDECIDED for c in result.cases)
    tests = len(result.cases) + bool(result.problems)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="numba2cuda verify" tests="{tests}" failures="{failures}" errors="0">',
             f'  <testsuite name={quoteattr(suite)} tests="{tests}" failures="{failures}" errors="0" '
             f'skipped="{skipped}">',
             f'    <properties><property name="translation" value={quoteattr(result.source)}/>'
             f'<property name="device" value={quoteattr(result.device)}/>'
             f'<property name="verdict" value={quoteattr(result.verdict)}/></properties>']
    if result.problems:
        lines.append(f'    <testcase classname={quoteattr(suite)} name="static checks" time="0">')
        lines.append(f'      <failure message={quoteattr(result.problems[0])} type="NotEquivalent">'
                     f'{escape(chr(10).join(result.problems))}</failure>')
        lines.append("    </testcase>")
    for c in result.cases:
        name = f"{c.kernel}[{case_label(c)}]"
        lines.append(f'    <testcase classname={quoteattr(suite + "." + c.kernel)} name={quoteattr(name)} '
                     f'time="{c.seconds:.3f}">')
        if c.verdict == NOT_EQUIVALENT:
            detail = "\n".join([f"grid {c.griddim} block {c.blockdim} shared {c.shared} B",
                                f"reference: {c.reference}", *c.problems])
            lines.append(f'      <failure message={quoteattr(c.problems[0])} type="NotEquivalent">'
                         f'{escape(detail)}</failure>')
        elif c.verdict == UNDECIDED:
            lines.append(f'      <skipped message={quoteattr("undecided: " + c.undecided[0])}/>')
        lines.append(f'      <system-out>{escape("reference: " + c.reference)}</system-out>')
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>", ""]
    return "\n".join(lines)


def _num(v: float) -> str:
    return f"{v:.3g}" if np.isfinite(v) else str(v)


def _table(rows) -> list[str]:
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return ["  " + "  ".join(s.ljust(w) for s, w in zip(row, widths)).rstrip() for row in rows]


def _accepts(r) -> str:
    if r.ulps is not None:
        return f"<= {r.ulps} ULP"
    if r.dtype.startswith(("int", "uint", "bool")):
        return "exact"
    return f"{r.rtol:g}/{r.atol:g}"


def _output_rows(outputs, prefix=""):
    rows = []
    for o in outputs:
        r = o.report
        rows.append((prefix + o.name, r.dtype, str(r.shape), "yes" if r.bit_identical else "no",
                     "-" if r.max_ulp is None else str(r.max_ulp), _num(r.max_abs), _num(r.max_rel),
                     _accepts(r), "ok" if r.ok else f"FAIL ({r.mismatches} differ)"))
    return rows


HEADER = ("output", "dtype", "shape", "bit-identical", "max ULP", "max abs", "max rel", "accepts", "result")


def format_case(c) -> list[str]:
    spec = "".join(f"  {p}={v}" + (" (specialised)" if c.specialised.get(p) else " (generic kernel)")
                   for p, v in c.params.items())
    inputs = "" if c.distribution in ("example", "cli") else f"  inputs {c.distribution}" + (
        f" ({', '.join(c.redrawn)})" if c.redrawn else "")
    ex = "" if c.example in ("example", "cli") else f"  {c.example}()"
    lines = [f"{c.kernel}{ex}  seed {c.seed}  size {c.size}{spec}{inputs}  grid {c.griddim} block {c.blockdim} "
             f"shared {c.shared} B  [{c.verdict}]",
             f"  reference: {c.reference}"]
    if c.outputs or c.cpu_outputs:
        lines += _table([HEADER] + _output_rows(c.outputs) + _output_rows(c.cpu_outputs, prefix="CPU runtime: "))
    lines.append(f"  inputs unchanged: {'yes' if c.inputs_unchanged else 'NO'}; two runs ({c.runs}) "
                 f"agree: {'yes' if c.runs_identical else 'NO'}")
    lines += [f"  FAIL: {p}" for p in c.problems] + [f"  UNDECIDED: {u}" for u in c.undecided]
    lines += [f"  note: {n}" for n in c.notes]
    return lines


def summary_lines(result) -> list[str]:
    """Per kernel and output: cases, how close the translation came everywhere, and the budget with its reason."""
    lines = []
    for kernel in dict.fromkeys(c.kernel for c in result.cases):
        cases = [c for c in result.cases if c.kernel == kernel]
        counts = {v: sum(c.verdict == v for c in cases) for v in ("EQUIVALENT", NOT_EQUIVALENT, UNDECIDED)}
        dists = sorted({c.distribution for c in cases} - {"example", "cli"})
        lines.append(f"{kernel}: {len(cases)} cases ({', '.join(f'{n} {v.lower()}' for v, n in counts.items() if n)})"
                     + (f"; redrawn inputs: {', '.join(dists)}" if dists else ""))
        per_output: dict = {}
        for c in cases:
            for o in c.outputs:
                per_output.setdefault(o.name, []).append(o.report)
        rows = []
        for name, reports in per_output.items():
            ulps = [r.max_ulp for r in reports if r.max_ulp is not None]
            exact = all(r.bit_identical for r in reports)
            rows.append((name, reports[0].dtype, "bit-identical" if exact else
                         f"max {max(ulps)} ULP" if ulps else "differs", _accepts(reports[0]),
                         "ok" if all(r.ok for r in reports) else "FAIL"))
            budget = next((r.budget for r in reports if r.budget), "")
            if budget and reports[0].dtype.startswith("float"):
                rows.append(("", "", "", f"  ({budget})", ""))
        if rows:
            lines += _table([("output", "dtype", "over all cases", "accepts", "result")] + rows)
    return lines


def format_report(result, verbose: bool = True) -> str:
    lines = []
    if verbose:
        for c in result.cases:
            lines += format_case(c)
    else:
        lines += summary_lines(result)
        shown = [c for c in result.cases if c.verdict == NOT_EQUIVALENT][:1] or \
            [c for c in result.cases if c.verdict == UNDECIDED][:1]
        for c in shown:
            lines.append(f"first {c.verdict.lower()} case (all cases: -v):")
            lines += format_case(c)
    original = sum(c.reference.startswith("Numba original") for c in result.cases)
    if result.cases and original == len(result.cases):
        lines.append(f"reference: the {result.cases[0].reference} for every case")
    elif result.cases and original < len(result.cases):
        lines.append(f"reference: the Numba original for {original} of {len(result.cases)} cases; example()'s "
                     "NumPy expected or none for the rest (see each case)")
    if any(c.cpu_outputs for c in result.cases):
        lines.append(cpu_agreement_line(result))
    lines += [f"FAIL: {p}" for p in result.problems]
    lines += [f"note: {n}" for n in result.notes]
    lines.append(verdict_line(result))
    return "\n".join(lines)


def cpu_agreement_line(result) -> str:
    """How far the CPU runtime is from the GPU original over all cases (information: FMA contraction on the
    GPU moves the last bits; only the CPU tier's own checks fail a case)."""
    worst, exact = {}, True
    for c in result.cases:
        for o in c.cpu_outputs:
            exact &= o.report.bit_identical
            if o.report.max_ulp is not None:
                key = f"{c.kernel}.{o.name.split(' ')[0]}"
                worst[key] = max(worst.get(key, 0), o.report.max_ulp)
    ulps = ", ".join(f"{k} {v}" for k, v in sorted(worst.items())) or "no float outputs"
    return (f"CPU runtime vs the GPU original (information, not a verdict): "
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
    verdict = result.verdict
    if not result.cases:
        return f"verdict: UNDECIDED (no case could be checked: {'; '.join(result.notes) or 'none planned'})"
    if verdict == "EQUIVALENT":
        return f"verdict: EQUIVALENT ({what})"
    if verdict == UNDECIDED:
        bad = next(c for c in result.cases if c.verdict == UNDECIDED)
        n = sum(c.verdict == UNDECIDED for c in result.cases)
        return (f"verdict: UNDECIDED ({what}): {n} case{'s' * (n != 1)} undecided; first: {bad.kernel} "
                f"[{case_label(bad)}]: {bad.undecided[0]}")
    if result.problems and not any(c.verdict == NOT_EQUIVALENT for c in result.cases):
        return f"verdict: NOT EQUIVALENT ({what}): {result.problems[0]}"
    bad = next(c for c in result.cases if c.verdict == NOT_EQUIVALENT)
    failed = sum(c.verdict == NOT_EQUIVALENT for c in result.cases)
    return (f"verdict: NOT EQUIVALENT ({what}): {failed} case{'s' * (failed != 1)} failed; first: {bad.kernel} "
            f"[{case_label(bad)}]: {bad.problems[0]}")
