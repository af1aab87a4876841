#!/usr/bin/env bash
# Copies the pure-Python sources of python/mpmd that changed into the build
# tree's package (build/python_packages/mpmd), as the build does, without
# running the build: for editing Python while a C++ build runs elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
src=python/mpmd
dst="$BUILD_DIR/python_packages/mpmd"
[ -d "$dst" ] || { echo "no $dst: run make build first" >&2; exit 1; }
(cd "$src" && find . -name '*.py') | while read -r name; do
  if ! cmp -s "$src/$name" "$dst/$name"; then
    mkdir -p "$(dirname "$dst/$name")"
    cp "$src/$name" "$dst/$name"
  fi
done
