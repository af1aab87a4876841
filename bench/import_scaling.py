#!/usr/bin/env python3
"""Scaling benchmark for the mpmd-opt import pipeline (--mpmd-import).

Generates a chain of N named computations with nameless "glue" between them
(a constant, tanh, multiply by the constant, add a residual from the chain),
spread over 4 meshes with N/4 consecutive layers per mesh. Inside a block the
glue is placed by mesh inference without transfers; at a block boundary the
last layer of a block feeds the first layer of the next block directly, so
import introduces one explicit transfer there (infer-transfers=false).

For each N it times, as the min over --repeat runs (more for small N):
  * baseline: `mpmd-opt in.mlir -o /dev/null` (parse + verify + print),
  * import:   `mpmd-opt in.mlir --mpmd-import=... -o /dev/null`,
and reports import time = import run - baseline run, per top-level op in main,
and the per-op ratio against the smallest N. The project's target is that the
per-op import time grows by at most 1.5x from the smallest to the largest N;
the result is reported, not enforced. The script exits non-zero only if
mpmd-opt fails or the import output of the smallest N is wrong (an op left
outside a fragment at the top level of main).

Unless --no-timing, every size is also run --repeat times with --mlir-timing;
the per-pass us/op (min over runs) and its growth are printed, then the raw
report of the largest size. mpmd-opt is copied to a temp dir first, so a
rebuild of build/bin/mpmd-opt during the run does not mix binaries.

Usage:
  .venv/bin/python bench/import_scaling.py [--sizes 1k,4k,16k] [--repeat 3]
      [--mpmd-opt build/bin/mpmd-opt] [--no-timing] [--keep DIR]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OPT = os.path.join(REPO, "build", "bin", "mpmd-opt")
NUM_MESHES = 4
MESHES = [f"m{i}" for i in range(NUM_MESHES)]
TARGET_RATIO = 1.5
# Linux limits one command-line argument to 32 pages (MAX_ARG_STRLEN).
ARG_LIMIT = 128 * 1024 - 1


def block_of(i, n):
    """Mesh index of layer i when n layers are split in NUM_MESHES blocks."""
    return min(i * NUM_MESHES // n, NUM_MESHES - 1)


def layer_name(i):
    """Short, unique layer name (base 36): the whole assignment has to fit in
    one command-line argument, see ARG_LIMIT."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        i, r = divmod(i, 36)
        out = digits[r] + out
        if i == 0:
            return "l" + out


def generate(n):
    """Returns (module_text, assignment_string, top_level_op_count)."""
    lines = []
    topo = ", ".join(f'<"{m}" : <["x"=2]>>' for m in MESHES)
    lines.append("!t = tensor<8xf32>")
    lines.append("func.func @main(%arg0: !t) -> (!t)")
    lines.append(f"  attributes {{topology=#mpmd.topology<{topo}>}} {{")
    top_ops = 0
    cur = "%arg0"
    prev_glue = None  # last glue value in the current block (for residuals)
    assign = []
    for i in range(n):
        mesh = block_of(i, n)
        name = layer_name(i)
        assign.append(f"{name}={MESHES[mesh]}")
        out = f"%l{i}"
        lines.append(
            f'  {out} = mpmd.named_computation<"{name}"> ({cur}) (%a: !t) {{')
        lines.append("    %0 = stablehlo.add %a, %a : !t")
        lines.append("    %1 = stablehlo.multiply %0, %a : !t")
        lines.append("    mpmd.return %1 : !t")
        lines.append("  } : (!t) -> !t")
        top_ops += 1
        last_in_block = i == n - 1 or block_of(i + 1, n) != mesh
        if last_in_block:
            # Block boundary: the next named computation consumes this one
            # directly (import adds the transfer); no glue.
            cur = out
            prev_glue = None
            continue
        residual = prev_glue if prev_glue is not None else out
        lines.append(f"  %c{i} = stablehlo.constant dense<0.5> : !t")
        lines.append(f"  %t{i} = stablehlo.tanh {out} : !t")
        lines.append(f"  %s{i} = stablehlo.multiply %t{i}, %c{i} : !t")
        lines.append(f"  %g{i} = stablehlo.add %s{i}, {residual} : !t")
        top_ops += 4
        cur = prev_glue = f"%g{i}"
    lines.append(f"  func.return {cur} : !t")
    top_ops += 1
    lines.append("}")
    return "\n".join(lines) + "\n", ",".join(assign), top_ops


def import_flag(assignment):
    return (f"--mpmd-import=assignment={assignment} "
            f"input-assignment=0={MESHES[0]} "
            f"output-assignment=0={MESHES[-1]} infer-transfers=false")


def run_opt(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors="replace")
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(f"mpmd-opt failed (rc={proc.returncode}): "
                         f"{' '.join(cmd[:2])} ...\n")
        sys.stderr.write(proc.stderr[-4000:])
        sys.exit(1)
    return dt, proc


def timed_min(cmd, repeat):
    return min(run_opt(cmd)[0] for _ in range(repeat))


TOP_LEVEL_OK = ("mpmd.fragment", "mpmd.transfer", "return", "func.return")


def check_import_output(text):
    """Checks that main's top level holds only fragments, transfers and the
    return. Returns (problems, op counts); problems is empty when fine."""
    problems = []
    m = re.search(r"^(\s*)func\.func @main\(.*\{\s*$", text, re.M)
    if not m:
        return ["could not find func.func @main in the import output"], {}
    func_indent = len(m.group(1))
    body_indent = None
    counts = {}
    for line in text[m.end():].splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= func_indent:
            break  # closing brace of main
        if body_indent is None:
            body_indent = indent
        if indent != body_indent:
            continue  # inside a region of a top-level op
        stmt = line.strip()
        if stmt.startswith("}"):
            continue  # "} : (...) -> ..." closing a fragment
        op = stmt.split("=", 1)[1].strip() if re.match(r"%[\w#:]+\s*=",
                                                       stmt) else stmt
        name = re.split(r"[\s<(\"{]", op, 1)[0]
        counts[name] = counts.get(name, 0) + 1
        if name not in TOP_LEVEL_OK:
            problems.append(f"non-MPMD op at top level of main: {stmt[:100]}")
    if counts.get("mpmd.fragment", 0) == 0:
        problems.append("no mpmd.fragment at top level of main")
    return problems, counts


TIMING_ROW = re.compile(r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*)$")


def timing_rows(report):
    """{name: seconds} from an --mlir-timing report (wall time column)."""
    rows = {}
    for line in report.splitlines():
        m = TIMING_ROW.match(line)
        if m:
            rows[m.group(2).strip()] = rows.get(m.group(2).strip(), 0.0) + \
                float(m.group(1))
    return rows


def parse_timing(stderr):
    """Extracts the --mlir-timing report lines from stderr."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if "Execution time report" in line:
            return "\n".join(lines[max(i - 1, 0):])
    return stderr


# --mlir-timing rows that are not import passes.
NOT_PASSES = ("Parser", "Output", "Rest", "Total", "passes only",
              "(A) DominanceInfo")


def print_per_pass(per_pass):
    """us/op of each --mlir-timing row for every size; its growth from the
    smallest size, and over the last step (second largest -> largest size).

    Parser and Output are upstream MLIR code and linear: their growth shows
    what the machine (caches, allocator, load) adds to any pass as the IR
    grows. A pass whose per-op growth over the last step exceeds Parser's by
    more than TARGET_RATIO (and that takes >= 3% of the total) is flagged."""
    for _, _, t in per_pass:
        t["passes only"] = sum(v for k, v in t.items() if k not in NOT_PASSES)
    names = [k for k in per_pass[-1][2]
             if k not in ("Total", "passes only")] + ["passes only", "Total"]
    sizes = [n for n, _, _ in per_pass]
    print("\nper-pass time, us/op (--mlir-timing, min over runs):")
    hdr = f"{'pass':<30}" + "".join(f"{'N=' + str(n):>9}" for n in sizes)
    if len(sizes) > 1:
        hdr += f"{'growth':>8}{'last step':>10}"
    print(hdr)
    print("-" * len(hdr))
    total_last = per_pass[-1][2].get("Total", 0.0)
    ref = [t.get("Parser", 0.0) / ops for _, ops, t in per_pass]
    ref_last = ref[-1] / ref[-2] if len(ref) > 1 and ref[-2] > 0 else 1.0
    for name in names:
        vals = [t.get(name, 0.0) / ops * 1e6 for _, ops, t in per_pass]
        line = f"{name:<30}" + "".join(f"{v:>9.2f}" for v in vals)
        if len(vals) > 1 and vals[0] > 0 and vals[-2] > 0:
            g, last = vals[-1] / vals[0], vals[-1] / vals[-2]
            line += f"{g:>7.2f}x{last:>9.2f}x"
            if (last > TARGET_RATIO * max(ref_last, 1.0) and
                    name not in NOT_PASSES and
                    per_pass[-1][2].get(name, 0.0) >= 0.03 * total_last):
                line += "  <-- grows faster than Parser"
        print(line)


def snapshot_opt(opt, tmpdir, wait_s=180):
    """Copies mpmd-opt into tmpdir so that a rebuild of build/bin/mpmd-opt
    while the benchmark runs cannot mix two binaries (or remove it). Waits up
    to wait_s for the binary to be there and runnable (it may be mid-link)."""
    deadline = time.time() + wait_s
    while True:
        if os.access(opt, os.X_OK) and subprocess.run(
                [opt, "--version"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            break
        if time.time() > deadline:
            sys.exit(f"mpmd-opt not found or not runnable at {opt}")
        print(f"waiting for {opt} (missing or not runnable; being rebuilt?)",
              flush=True)
        time.sleep(10)
    copy = os.path.join(tmpdir, "mpmd-opt")
    shutil.copy2(opt, copy)
    return copy


def reps_for(n, largest, repeat):
    """Small sizes are cheap and noisier (process start-up is a large share),
    so they get more runs: up to 4x --repeat."""
    return repeat * max(1, min(4, largest // (4 * n)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,4000,16000",
                    help="comma-separated chain lengths N (k suffix allowed)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per measurement; the min is reported")
    ap.add_argument("--mpmd-opt", default=DEFAULT_OPT)
    ap.add_argument("--no-timing", dest="timing", action="store_false",
                    help="skip the --mlir-timing per-pass breakdown "
                         "(--repeat extra mpmd-opt runs per size)")
    ap.add_argument("--keep", metavar="DIR",
                    help="write the generated inputs to DIR and keep them")
    args = ap.parse_args()

    sizes = []
    for s in args.sizes.split(","):
        s = s.strip().lower()
        sizes.append(int(float(s[:-1]) * 1000) if s.endswith("k") else int(s))
    sizes = sorted(set(sizes))
    if any(n < NUM_MESHES for n in sizes):
        ap.error(f"every size must be >= {NUM_MESHES}")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")

    tmpdir = tempfile.mkdtemp(prefix="mpmd_import_bench_")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    rows = []
    status = 0
    timing_report = None
    per_pass = []  # (n, ops, {pass: seconds}) per size
    t_start = time.perf_counter()
    try:
        opt = snapshot_opt(args.mpmd_opt, tmpdir)
        for idx, n in enumerate(sizes):
            text, assignment, ops = generate(n)
            path = os.path.join(args.keep or tmpdir, f"chain_{n}.mlir")
            with open(path, "w") as f:
                f.write(text)
            flag = import_flag(assignment)
            if len(flag) >= ARG_LIMIT:
                # Too long for one argv entry: go through an LLVM response
                # file. mpmd-opt keeps pointers into the expanded response
                # file text after freeing it, so this can fail with
                # "<Pass-Options-Parser>: no such option <garbage>".
                print(f"  warning: N={n}: the --mpmd-import flag is "
                      f"{len(flag)} bytes (> {ARG_LIMIT}); passing it via a "
                      f"response file, which mpmd-opt mishandles (may fail)")
                rsp = os.path.join(tmpdir, f"chain_{n}.import.rsp")
                with open(rsp, "w") as f:
                    f.write(f'"{flag}"\n')
                flag = "@" + rsp
            if idx == 0:
                # Correctness of the import output for the smallest size.
                _, proc = run_opt([opt, path, flag])
                problems, counts = check_import_output(proc.stdout)
                if problems:
                    print(f"IMPORT OUTPUT CHECK FAILED for N={n}:")
                    for p in problems[:10]:
                        print("  " + p)
                    status = 1
                else:
                    summary = ", ".join(f"{k}: {v}"
                                        for k, v in sorted(counts.items()))
                    print(f"import output check for N={n}: OK "
                          f"(top level of main: {summary})")
            # Baseline and import runs alternate so that drift in machine
            # load hits both alike; each keeps its min.
            reps = reps_for(n, sizes[-1], args.repeat)
            base = full = float("inf")
            for _ in range(reps):
                base = min(base, run_opt([opt, path, "-o", os.devnull])[0])
                full = min(full, run_opt([opt, path, flag, "-o",
                                          os.devnull])[0])
            imp = max(full - base, 0.0)
            rows.append((n, ops, base, imp, imp / ops * 1e6))
            print(f"  N={n}: ops={ops} parse+print={base:.3f}s "
                  f"import={imp:.3f}s (min of {reps})", flush=True)
            if args.timing:
                # Per-pass min over --repeat runs; the printed raw report is
                # the run with the smallest total.
                best = {}
                best_total = float("inf")
                for _ in range(args.repeat):
                    _, proc = run_opt([opt, path, flag, "-o", os.devnull,
                                       "--mlir-timing"])
                    report = parse_timing(proc.stderr)
                    t = timing_rows(report)
                    for k, v in t.items():
                        best[k] = min(best.get(k, float("inf")), v)
                    if t.get("Total", 0.0) < best_total:
                        best_total = t.get("Total", 0.0)
                        timing_report = report
                per_pass.append((n, ops, best))
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)

    print()
    hdr = (f"{'N':>7} {'ops':>8} {'parse+print s':>14} {'import s':>9} "
           f"{'import us/op':>13} {'ratio':>6}")
    print(hdr)
    print("-" * len(hdr))
    base_us = rows[0][4]
    for n, ops, base, imp, us in rows:
        ratio = us / base_us if base_us > 0 else float("nan")
        print(f"{n:>7} {ops:>8} {base:>14.3f} {imp:>9.3f} {us:>13.2f} "
              f"{ratio:>6.2f}")
    if len(rows) > 1:
        ratio = rows[-1][4] / base_us if base_us > 0 else float("nan")
        verdict = "MET" if ratio <= TARGET_RATIO else "NOT MET"
        print(f"\nper-op import time N={rows[0][0]} -> N={rows[-1][0]}: "
              f"{ratio:.2f}x (target <= {TARGET_RATIO}x): {verdict}")
    if per_pass:
        print_per_pass(per_pass)
    if timing_report:
        print(f"\n--mlir-timing for N={rows[-1][0]} (fastest of "
              f"{args.repeat} runs):")
        print(timing_report)
    print(f"\nbenchmark wall time: {time.perf_counter() - t_start:.1f}s")
    return status


if __name__ == "__main__":
    sys.exit(main())
