#!/usr/bin/env bash
# The GPU check (docs/gpu.md): MPMD programs exported on the build machine,
# run on a machine with one NVIDIA GPU that has JAX but no LLVM/MLIR, no
# build of mpmd and no network.
#
#   scripts/gpu_check.sh bundle   # here (after `make build`): export the
#                                 # programs into build/gpu_bundle
#   scripts/gpu_check.sh          # there: run them, compare with jax.jit,
#                                 # print one table (at most 5 minutes)
#
# The run needs the `python/` source tree (the mpmd package, run without
# its extensions), `examples/models.py` (the model) and the bundle: carry build/gpu_bundle. Without an NVIDIA
# GPU it says so and makes a dry run on two CPU devices.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${MPMD_GPU_BUNDLE:-build/gpu_bundle}

if [ "${1:-run}" = bundle ]; then
  if [ ! -x .venv/bin/python ]; then
    echo "gpu_check: no .venv; run 'make build' first" >&2
    exit 1
  fi
  .venv/bin/python scripts/gpu_check.py bundle "$bundle"
  tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
  extra=$(du -sb "$bundle" | cut -f1)
  echo "gpu_check: what travels: the tracked tree $((tree / 1024)) KiB +" \
       "the bundle $((extra / 1024)) KiB = $(((tree + extra) / 1024)) KiB" \
       "(the limit is 65536 KiB); carry $bundle"
  exit 0
fi

if [ ! -f "$bundle/manifest.json" ]; then
  echo "gpu_check: no bundle in $bundle: run 'scripts/gpu_check.sh bundle'" \
       "on the build machine and carry $bundle" >&2
  exit 1
fi
python=${PYTHON:-python3}
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU ' || true)
fi
flags=()
if [ "$gpus" -eq 0 ]; then
  echo "gpu_check: no NVIDIA GPU found: a dry run on two CPU devices"
  flags=(--cpu)
else
  nvidia-smi -L
fi
export PYTHONPATH=python PYTHONUNBUFFERED=1
exec timeout 300 "$python" scripts/gpu_check.py run "$bundle" "${flags[@]}"
