"""bench results (plain data / saved JSON) -> a table (rich if installed, plain text otherwise) and a PNG of speedups.

Works from the JSON alone, on a machine without a GPU:
    python3 -m translator.bench.report RESULT.json [--plot speedups.png]
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from .. import progress


class Progress:
    """bench's progress on a terminal's stderr (translator/progress.py): one bar over the cases (kernel x size),
    its note the case, how many variants it has and the phase (checking, device time, host overhead)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self._cm = None
        self._bar = None

    def begin(self, total: int | None) -> None:
        if self._cm is None:
            self._cm = progress.bar("bench", total=total, stream=self.stream)
            self._bar = self._cm.__enter__()

    def __call__(self, case, text: str) -> None:
        self.begin(None)
        self._bar.update(note=f"{case.kernel} size {case.size} ({len(case.variants)} variants): {text}")

    def case_done(self) -> None:
        if self._bar is not None:
            self._bar.advance()

    def finish(self) -> None:
        if self._cm is not None:
            self._cm.__exit__(None, None, None)
            self._cm = self._bar = None


def _us(v) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def _x(r) -> str:
    if not r:
        return "-"
    return f"{r['ratio']:.2f}x"


def _range(r) -> str:
    return f"{r['lo']:.2f}-{r['hi']:.2f}" if r else "-"


def check_text(v: dict) -> str:
    """The correctness column: how the variant's outputs compared, before any timing."""
    g = v["gate"]
    if g["status"] in ("error", "skipped"):
        return g["status"]
    if g["status"] == "mismatch":
        return "MISMATCH"
    if v["role"] == "numba-torch":
        return "= baseline" if g.get("bit_identical") else "~ baseline"
    if v["role"] == "numba":
        return "baseline" if g.get("ok", True) and not g.get("note") else "baseline (differs from expected)"
    if v["role"] == "reference":
        return "~ expected" if g.get("within_tolerance") else "differs from expected"
    if g.get("bit_identical"):
        return "bit-identical"
    return f"<= {g['max_ulp']} ULP" if g.get("max_ulp") is not None else "within tolerance"


def rate_text(v: dict) -> str:
    parts = []
    if v.get("tflops") is not None:
        parts.append(f"{v['tflops']:.2f} TFLOP/s")
    if v.get("gbps") is not None:
        parts.append(f"{v['gbps']:.0f} GB/s")
    return ", ".join(parts) or "-"


COLUMNS = ("variant", "check", "device us", "quartiles", "n", "vs Numba", "range", "e2e us",
           "vs Numba e2e", "vs Numba+torch e2e", "enqueue us", "throughput")
#: the default table's columns (it fits 120 columns); --wide, the JSON and the Markdown report have them all
COMPACT = ("variant", "check", "device us", "vs Numba", "e2e us", "vs Numba e2e", "vs Numba+torch e2e")
TABLE_WIDTH = 120


def case_rows(case: dict) -> list[tuple]:
    rows = []
    for v in case["variants"]:
        d, h = v.get("device"), v.get("end_to_end")
        name = v["name"] + (" (default)" if v["default"] and v["role"] != "reference" and case["defaults"] else "")
        if v["role"] in ("translation", "generic") and v.get("specialised") is False:
            name += " [generic]" if v["role"] == "translation" else ""
        rows.append((name, check_text(v), _us(d and d["median_us"]),
                     f"{_us(d['q1_us'])}-{_us(d['q3_us'])}" if d else "-", str(d["n"]) if d else "-",
                     _x(v.get("vs_numba_device")), _range(v.get("vs_numba_device")), _us(h and h["median_us"]),
                     _x(v.get("vs_numba_end_to_end")), _x(v.get("vs_numba_torch_end_to_end")),
                     _us(v.get("enqueue_us")), rate_text(v)))
    return rows


def case_heading(case: dict) -> str:
    launch = case.get("launch") or {}
    extra = []
    if case.get("flops"):
        extra.append(f"{case['flops'] / 1e9:.1f} GFLOP")
    if case.get("bytes"):
        extra.append(f"{case['bytes'] / 1e6:.0f} MB moved")
    return (f"{case['kernel']}  size {case['size']}  grid {launch.get('griddim')} block {launch.get('blockdim')} "
            f"shared {launch.get('shared', 0)} B" + (f"  ({', '.join(extra)})" if extra else ""))


def case_notes(case: dict, autotune: bool) -> list[str]:
    lines = []
    if not case.get("stable", True):
        n = max((v["device"]["n"] for v in case["variants"] if v.get("device")), default=0)
        lines.append(f"note: device medians still moved more than 0.5% between batches after {n} samples (time cap)")
    pick = case.get("autotune")
    if autotune and pick:
        runner_up = next((r for r in pick["ranking"] if r["variant"] != pick["variant"]), None)
        text = (f"autotune: {', '.join(f'{k}={v}' for k, v in pick['params'].items())} is fastest at size "
                f"{case['size']} ({_us(pick['median_us'])} us")
        text += f"; next {runner_up['variant']} {_us(runner_up['median_us'])} us)" if runner_up else ")"
        if pick["tied_with"]:
            text += f"; tied within the spread with {', '.join(pick['tied_with'])}"
        lines.append(text)
    failed = " ".join(case.get("failures", []))
    for v in case["variants"]:
        if v["gate"].get("note"):
            lines.append(f"note: {v['name']}: {v['gate']['note']}")
        if v["gate"]["status"] == "mismatch" and v["role"] == "numba-torch":
            lines.append(f"note: {v['name']} differs from Numba on its own device arrays (not timed): "
                         f"{v['gate'].get('detail', '')}")
        if v["gate"]["status"] in ("error", "skipped") and f": {v['name']}: " not in failed:
            lines.append(f"note: {v['name']} not timed ({v['gate']['status']}): {v['gate'].get('detail', '')}")
    lines += [f"note: {n}" for n in case.get("notes", [])]
    lines += [f"FAIL: {f} (not timed)" for f in case.get("failures", [])]
    return lines


def pick_columns(rows: list[tuple], columns) -> list[tuple]:
    keep = [COLUMNS.index(c) for c in columns]
    return [tuple(r[k] for k in keep) for r in rows]


def plain_table(rows: list[tuple], columns=COLUMNS) -> str:
    table = [tuple(columns), *rows]
    widths = [max(len(r[k]) for r in table) for k in range(len(columns))]
    return "\n".join("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table)


def rich_table(rows: list[tuple], title: str, columns=COLUMNS, width: int = 240) -> str | None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        return None
    import io

    table = Table(title=title, title_justify="left", show_lines=False)
    for i, c in enumerate(columns):
        table.add_column(c, justify="left" if i < 2 else "right", no_wrap=i > 0)  # only names wrap
    for r in rows:
        table.add_row(*r, style="bold red" if r[1] in ("MISMATCH", "error") else None)
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False, color_system=None).print(table)
    return "\n".join(line.rstrip() for line in buf.getvalue().rstrip().splitlines())


def format_report(doc: dict, autotune: bool = False, use_rich: bool | None = None, wide: bool = False) -> str:
    """The whole run: per case its table and notes; then what is wrong, if anything. The table has the COMPACT
    columns and fits TABLE_WIDTH unless WIDE."""
    lines = []
    env = doc.get("env") or {}
    if env:
        lines.append(f"{env.get('gpu')} (driver {env.get('driver')}, CUDA {env.get('cuda')}), "
                     f"torch {env.get('torch')}, numba-cuda {env.get('numba_cuda')}; {env.get('date')}")
    columns = COLUMNS if wide else COMPACT
    for case in doc["cases"]:
        rows = pick_columns(case_rows(case), columns)
        table = (rich_table(rows, case_heading(case), columns, 240 if wide else TABLE_WIDTH)
                 if use_rich is not False else None)
        if table is None or use_rich is False:
            table = case_heading(case) + "\n" + plain_table(rows, columns)
        lines.append(table)
        lines += ["  " + n for n in case_notes(case, autotune)]
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    failures = [f for c in doc["cases"] for f in c.get("failures", [])]
    lines.append(f"verdict: {len(failures)} variant{'s' * (len(failures) != 1)} WRONG" if failures else
                 "verdict: every translation variant matches the Numba original; device times are medians of "
                 "CUDA-event timings, e2e (end to end) includes the host's launch cost")
    if wide:
        return "\n".join(lines)
    return "\n".join(wrapped for line in lines for wrapped in _wrap(line))


def _wrap(line: str) -> list[str]:
    """A prose line cut to TABLE_WIDTH, continuation lines indented under it; table lines are left alone."""
    if len(line) <= TABLE_WIDTH or "\n" in line:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(line, TABLE_WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def format_markdown(doc: dict, autotune: bool = True) -> str:
    """The whole run as Markdown: per case a heading, the table with every column, and the notes."""
    env = doc.get("env") or {}
    lines = [f"# numba2cuda bench: {doc.get('module', '')}", ""]
    if env:
        lines += [f"{env.get('gpu')} (driver {env.get('driver')}, CUDA {env.get('cuda')}), torch {env.get('torch')}, "
                  f"numba-cuda {env.get('numba_cuda')}; {env.get('date')}", ""]
    if doc.get("command"):
        lines += [f"`{doc['command']}`", ""]
    for case in doc["cases"]:
        lines += [f"## {case_heading(case)}", "", "| " + " | ".join(COLUMNS) + " |",
                  "|" + "|".join("---" if i < 2 else "---:" for i in range(len(COLUMNS))) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in case_rows(case)]
        notes = case_notes(case, autotune)
        lines += [""] + [f"- {n}" for n in notes] + ([""] if notes else [])
    lines += [f"- note: {n}" for n in doc.get("notes", [])]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- the chart

def speedup_bars(doc: dict) -> list[dict]:
    """What the chart shows: one bar per (case, non-baseline variant) of a bench result, or per corpus case
    (its default translation) of a corpus result: device and end-to-end speedup over Numba."""
    bars = []
    if "modules" in doc:  # benchmarks/run_corpus.py's result: the first run of each module
        for name, entry in doc["modules"].items():
            for case in (entry.get("runs") or [{}])[0].get("cases", []):
                v = next((v for v in case["variants"] if v["role"] == "translation" and v["default"]), None)
                if v and v.get("vs_numba_device"):
                    bars.append(_bar(f"{name} {case['size']}", v))
        return bars
    for case in doc["cases"]:
        for v in case["variants"]:
            if v["name"] != case.get("baseline") and v["role"] != "numba-torch" and v.get("vs_numba_device"):
                bars.append(_bar(f"{case['kernel']} {case['size']}: {v['name']}", v))
    return bars


def _bar(label: str, v: dict) -> dict:
    d, h, t = v["vs_numba_device"], v.get("vs_numba_end_to_end"), v.get("vs_numba_torch_end_to_end")
    return {"label": label, "device": d["ratio"], "lo": d["lo"], "hi": d["hi"], "end_to_end": h and h["ratio"],
            "torch_end_to_end": t and t["ratio"]}


def plot_speedups(doc: dict, path: str) -> None:
    """A PNG bar chart of speedups over the Numba original (log scale when they span a wide range)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = speedup_bars(doc)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(bars) + 2), 5.5))
    xs = list(range(len(bars)))
    device = [b["device"] for b in bars]
    err = [[b["device"] - b["lo"] for b in bars], [b["hi"] - b["device"] for b in bars]]
    ax.bar([x - 0.27 for x in xs], device, width=0.27, yerr=err, capsize=2, label="device time")
    ax.bar(xs, [b["end_to_end"] or 0 for b in bars], width=0.27,
           label="end to end, Numba given its own device arrays")
    ax.bar([x + 0.27 for x in xs], [b.get("torch_end_to_end") or 0 for b in bars], width=0.27,
           label="end to end, Numba given torch tensors (as the lecture calls it)")
    ax.axhline(1.0, color="black", linewidth=0.8)
    values = [v for b in bars for v in (b["device"], b["end_to_end"], b.get("torch_end_to_end")) if v]
    if values and max(values) / max(min(values), 1e-9) > 30:
        ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([b["label"] for b in bars], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("speedup over the Numba original (x)")
    env = doc.get("env") or {}
    ax.set_title(f"numba2cuda: translation vs Numba, {env.get('gpu', '')} {env.get('date', '')}".strip(), fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m translator.bench.report",
                                description="Show a saved `numba2cuda bench --json` result; optionally plot it.")
    p.add_argument("json", help="a result written by numba2cuda bench --json (or benchmarks/run_corpus.py)")
    p.add_argument("--plot", metavar="PATH.png", help="write the bar chart of speedups (needs matplotlib)")
    p.add_argument("--wide", action="store_true", help="every column (default: those that fit 120 columns)")
    p.add_argument("--md", action="store_true", help="print the Markdown report (every column) instead")
    args = p.parse_args(argv)
    with open(args.json, encoding="utf-8") as f:
        doc = json.load(f)
    if "cases" in doc:
        if args.md:
            sys.stdout.write(format_markdown(doc))
        else:
            print(format_report(doc, autotune=True, wide=args.wide))
    if args.plot:
        try:
            plot_speedups(doc, args.plot)
        except ImportError:
            print("error: --plot needs matplotlib (pip install matplotlib)", file=sys.stderr)
            return 2
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
