#!/usr/bin/env bash
# Runs the demo and two benchmarks on NVIDIA GPUs (not part of `make test`).
#
# On a machine without an NVIDIA GPU it says so in one line and exits 0.
# Otherwise it installs JAX's CUDA 12 plugin at the jax version pinned in
# requirements.txt into .venv (made by scripts/setup.sh if missing; mpmd
# itself must be built: `make build`), then runs with JAX_PLATFORMS=cuda:
#   examples/demo.py, bench/compile_vs_jit.py, bench/schedules.py
# All three build their meshes over 8 devices (demo: 2 meshes of 2x2,
# the benchmarks: 4 meshes of 2 or 2 of 2x2), so they need 8 GPUs.
set -euo pipefail
cd "$(dirname "$0")/.."

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU ' || true)
fi
if [ "$gpus" -eq 0 ]; then
  echo "gpu_check: no NVIDIA GPU found; nothing to do"
  exit 0
fi

header() { printf '\n===== %s =====\n' "$*"; }

header "gpu_check: $gpus NVIDIA GPU(s)"
nvidia-smi -L

if [ ! -x .venv/bin/python ]; then
  header "no .venv: scripts/setup.sh"
  scripts/setup.sh
fi
PY=.venv/bin/python

# The plugin must match the pinned jax and jaxlib exactly.
jax_version=$(sed -n 's/^jax==\([^[:space:]#]*\).*/\1/p' requirements.txt)
jaxlib_version=$(sed -n 's/^jaxlib==\([^[:space:]#]*\).*/\1/p' requirements.txt)
if [ -z "$jax_version" ]; then
  echo "gpu_check: no 'jax==<version>' line in requirements.txt" >&2
  exit 1
fi
if [ -n "$jaxlib_version" ] && [ "$jaxlib_version" != "$jax_version" ]; then
  echo "gpu_check: requirements.txt pins jax $jax_version but jaxlib" \
       "$jaxlib_version; the CUDA plugin follows jaxlib" >&2
  jax_version=$jaxlib_version
fi

header "installing jax-cuda12-plugin[with-cuda]==$jax_version and jax-cuda12-pjrt==$jax_version"
"$PY" -m pip install -q --disable-pip-version-check \
  "jax-cuda12-plugin[with-cuda]==$jax_version" "jax-cuda12-pjrt==$jax_version"

export JAX_PLATFORMS=cuda

header "JAX's devices"
"$PY" -c 'import jax; print(jax.__version__, jax.devices())'
if ! "$PY" -c 'import mpmd' 2>/dev/null; then
  echo "gpu_check: mpmd is not importable from .venv; run 'make build' first" >&2
  exit 1
fi
if [ "$gpus" -lt 8 ]; then
  echo "gpu_check: $gpus GPU(s); demo.py, compile_vs_jit.py and schedules.py" \
       "need 8 devices, so they were not run" >&2
  exit 1
fi

header "examples/demo.py"
"$PY" examples/demo.py

header "bench/compile_vs_jit.py"
"$PY" bench/compile_vs_jit.py

# schedules.py takes the first 8 of jax.devices() as 4 meshes of 2; it has
# no device flags (its labels say "CPU devices" whatever the platform).
header "bench/schedules.py"
"$PY" bench/schedules.py

header "gpu_check: done"
