#!/usr/bin/env python3
"""Prints an MLIR file the way upstream StableHLO does, as a reference.

jaxlib ships upstream's StableHLO, CHLO and Shardy dialects with MLIR's
Python bindings; parsing a file in JAX's own MLIR context and printing it
gives upstream's text for the same IR. The lit tests diff mpmd-opt's output
against it. Output ends with one newline, as mpmd-opt's does.

Usage: jaxlib_print.py FILE [--generic]
"""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jax.interpreters import mlir as jax_mlir  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402


def main() -> int:
    path = sys.argv[1]
    generic = "--generic" in sys.argv[2:]
    with open(path) as f:
        text = f.read()
    context = jax_mlir.make_ir_context()
    with context:
        module = ir.Module.parse(text)
        print(
            module.operation.get_asm(
                print_generic_op_form=generic, enable_debug_info=False
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
