"""The main demo: what mpmd can do today, end to end through its Python API.

Today that is the compiler's foundation: an RFC-style MPMD program (two
meshes, fragments, transfers) is parsed and verified by the C++ compiler,
canonicalized (dead fragment results and arguments dropped, no-op transfers
and assign/unassign pairs folded), and a mistake in it is reported as an
`mpmd` error with its location. This file grows into the end-to-end demo as
import, export and the runtime land.
"""

from __future__ import annotations

import textwrap

import mpmd

PROGRAM = textwrap.dedent(
    """\
    !t = tensor<4xf32>
    !m1_t = !mpmd.mesh_tensor<"m1", !t>
    !m2_t = !mpmd.mesh_tensor<"m2", !t>
    module {
      sdy.mesh @mesh = <["x"=2]>
      func.func @main(%arg0: !m1_t, %arg1: !m1_t) -> (!m1_t, !m2_t)
          attributes {topology = #mpmd.topology<<"m1" : <["x"=2]>>, <"m2" : <["x"=2]>>>} {
        // layer1 also returns a value nobody uses, and reads %arg1 for nothing.
        %0:3 = mpmd.fragment<mesh="m1", origin=["layer1"], stage=1> (%arg0, %arg1)
            (%a: !t, %unused: !t) {
          %1 = stablehlo.add %a, %a : !t
          %2 = stablehlo.multiply %1, %1 : !t
          mpmd.return %1, %2, %a : !t, !t, !t
        } : (!m1_t, !m1_t) -> (!m1_t, !m1_t, !m1_t)
        %1 = mpmd.transfer %0#0 : (!m1_t) -> !m2_t
        // A transfer to where the value already is: a no-op.
        %2 = mpmd.transfer %1 : (!m2_t) -> !m2_t
        %3 = mpmd.fragment<mesh="m2", origin=["layer2"], stage=2> (%2) (%a: !t) {
          %4 = stablehlo.add %a, %a : !t
          %5 = stablehlo.divide %4, %4 : !t
          mpmd.return %5 : !t
        } : (!m2_t) -> !m2_t
        return %0#1, %3 : !m1_t, !m2_t
      }
    }
    """
)

# layer2's fragment claims mesh m1 but is fed (and returns) mesh-m2 tensors.
BROKEN = PROGRAM.replace('mpmd.fragment<mesh="m2"', 'mpmd.fragment<mesh="m1"')


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def main() -> None:
    banner("input: an MPMD program on two meshes")
    print(PROGRAM)
    banner("after mpmd's canonicalization (C++ compiler, via the Python API)")
    print(mpmd.run_pipeline(PROGRAM, "builtin.module(canonicalize)"))
    banner("a fragment declared on the wrong mesh: an mpmd error")
    try:
        mpmd.verify(BROKEN)
    except mpmd.MpmdError as error:
        print(f"{type(error).__name__}: {error}")
    else:
        raise SystemExit("demo: the broken program was accepted")


if __name__ == "__main__":
    main()
