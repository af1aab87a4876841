"""scripts/gpu_check.sh, the check a lent GPU machine runs: its bundle is
made here (three exported programs, the size of what travels), and its run
works on this machine's CPUs as a dry run, from the `python/` source tree
without the extensions, as it runs there (docs/gpu.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "gpu_check.py")


def test_bundle_and_dry_run(tmp_path):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env.pop("JAX_PLATFORMS", None)
    bundle = tmp_path / "bundle"
    made = subprocess.run([sys.executable, SCRIPT, "bundle", str(bundle)],
                          env=env, capture_output=True, text=True,
                          timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr[-3000:]
    assert sorted(os.listdir(bundle)) == ["manifest.json", "offload.mpmd",
                                          "stage.mpmd", "step.mpmd"]
    total = sum(p.stat().st_size for p in bundle.iterdir())
    assert total < 4 * 2**20
    # As on the GPU machine: the source tree only, so no extension.
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    ran = subprocess.run([sys.executable, SCRIPT, "run", str(bundle), "--cpu"],
                         env=env, capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    out = ran.stdout
    assert ran.returncode == 0, out + ran.stderr[-3000:]
    assert "C++ step loop: no (the Python step loop)" in out
    rows = re.findall(r"^\| (.+?) +\| (PASS|FAIL|info|-) +\|", out, re.M)
    results = dict(rows)
    for check in ("2-mesh step (gpu + cpu meshes): numbers vs jax.jit",
                  "step, layer0 residuals in pinned_host: numbers vs jax.jit",
                  "gpu stage alone: numbers vs jax.jit"):
        assert results.get(check) == "PASS", out
    assert "4 to pinned_host" in out
    assert "the GPU itself (dry run on CPU)" in out
