#!/usr/bin/env bash
# The self-contained wheel, checked (README "The wheel"): builds it with
# `pip wheel .` (no build isolation: the venv's pinned scikit-build-core
# and nanobind; nothing is downloaded), checks that its extensions need no
# libMLIR/libLLVM, installs it with the pinned JAX into a fresh venv, and
# runs a 2-mesh pipeline there, from outside the source tree, against
# jax.jit. Prints the wheel's size and what its extensions link.
#
#   scripts/wheel_check.sh [OUT_DIR]     # default build/wheel-check
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-build/wheel-check}
py=.venv/bin/python
mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "== wheel_check: pip wheel ."
rm -f "$out"/mpmd-*.whl
# Paths relative to the repository in ccache's keys: a clone elsewhere
# reuses the objects of an earlier build.
CCACHE_BASEDIR=$root "$py" -m pip wheel . -q --no-build-isolation --no-deps \
  -w "$out"
wheel=$(ls "$out"/mpmd-*.whl)
size=$(stat -c %s "$wheel")
echo "wheel_check: $(basename "$wheel"): $((size / 1024)) KiB"

echo "== wheel_check: what its extensions link"
rm -rf "$out/unpacked"
"$py" -m zipfile -e "$wheel" "$out/unpacked"
bad=0
for so in "$out"/unpacked/mpmd/*.so; do
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "wheel_check: $(basename "$so") ($(( $(stat -c %s "$so") / 1024 )) KiB) needs: $needed"
  if echo "$needed" | grep -Eq 'libMLIR|libLLVM|libz3|libxml2'; then
    echo "wheel_check: $(basename "$so") links a library the wheel must not need" >&2
    bad=1
  fi
  if readelf -d "$so" | grep -Eq 'R(UN)?PATH'; then
    echo "wheel_check: $(basename "$so") has an rpath" >&2
    bad=1
  fi
done
[ "$bad" -eq 0 ]

echo "== wheel_check: a fresh venv with the pinned JAX and the wheel"
base=$("$py" -c 'import sys; print(sys._base_executable)')
rm -rf "$out/venv"
"$base" -m venv "$out/venv"
pins=$(grep -E '^(jax|jaxlib|numpy|flatbuffers)==' requirements.txt)
# shellcheck disable=SC2086
"$out/venv/bin/python" -m pip install -q --disable-pip-version-check \
  $pins "$wheel" 2>&1 | grep -v "is ignored: it is neither" || true
"$out/venv/bin/python" -c "import mpmd, jax" # the install went through

echo "== wheel_check: a 2-mesh pipeline from the installed wheel"
cd "$out"
env -u PYTHONPATH -u LD_LIBRARY_PATH \
  XLA_FLAGS=--xla_force_host_platform_device_count=4 JAX_PLATFORMS=cpu \
  "$out/venv/bin/python" "$root/scripts/wheel_pipeline.py"
