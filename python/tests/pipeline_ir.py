"""Synthetic pipelined MPMD programs for schedule tests and benchmarks.

`pipeline_module(p, m, v)` builds the IR a pipelined training step imports
to: p meshes, v stages per mesh (stage s on mesh s mod p), m microbatches.
Forward F(s, i) feeds F(s+1, i) (through a transfer when the mesh changes);
backward B(s, i) reads B(s+1, i) and F(s, i)'s activation, and accumulates
the gradient of microbatch i - 1 (as gradient accumulation in a loop does).
"""

from __future__ import annotations

import re

_TENSOR = "tensor<4xf32>"


def pipeline_module(p: int, m: int, v: int = 1,
                    reverse_accumulation: bool = False) -> str:
    meshes = [f"m{r}" for r in range(p)]
    topology = ", ".join(f'<"{mesh}" : <["x"=1]>>' for mesh in meshes)
    num_stages = p * v

    def mt(mesh: str) -> str:
        return f'!mpmd.mesh_tensor<"{mesh}", {_TENSOR}>'

    lines = [f"func.func @main(%x: {mt(meshes[0])}) -> ({', '.join(mt(meshes[(s) % p]) for s in range(num_stages))})",
             f"    attributes {{topology = #mpmd.topology<{topology}>}} {{"]
    counter = 0

    def fresh() -> str:
        nonlocal counter
        counter += 1
        return f"%v{counter}"

    def fragment(mesh: str, origin: str, stage: int, mb: int,
                 inputs: list[str], body_op: str) -> str:
        result = fresh()
        args = ", ".join(f"%a{k}: {_TENSOR}" for k in range(len(inputs)))
        ins = ", ".join(inputs)
        types = ", ".join(mt(mesh) for _ in inputs)
        # The body reads every input, so that no canonicalization drops one.
        body = [f"    %r0 = {body_op} %a0, %a0 : {_TENSOR}"]
        for k in range(1, len(inputs)):
            body.append(f"    %r{k} = {body_op} %r{k - 1}, %a{k} : {_TENSOR}")
        last = f"%r{len(inputs) - 1}"
        lines.append(
            f'  {result} = mpmd.fragment<mesh="{mesh}", origin=[{origin}], '
            f'stage={stage}> ({ins}) {{call_counter = {mb} : ui32}} ({args}) {{\n'
            + "\n".join(body) + "\n"
            f"    mpmd.return {last} : {_TENSOR}\n"
            f"  }} : ({types}) -> {mt(mesh)}")
        return result

    def move(value: str, source: str, target: str) -> str:
        if source == target:
            return value
        result = fresh()
        lines.append(f"  {result} = mpmd.transfer {value} : ({mt(source)}) -> {mt(target)}")
        return result

    activations: dict[tuple[int, int], str] = {}
    for mb in range(m):
        value, where = "%x", meshes[0]
        for s in range(num_stages):
            mesh = meshes[s % p]
            value = move(value, where, mesh)
            value = fragment(mesh, f'"s{s}"', s, mb, [value], "stablehlo.add")
            activations[(s, mb)] = value
            where = mesh
    accumulated: dict[int, str] = {}
    # Gradients accumulate in microbatch order (a loop computing each
    # microbatch's gradient), or in reverse (the transpose of a loop).
    for mb in (reversed(range(m)) if reverse_accumulation else range(m)):
        grad, where = activations[(num_stages - 1, mb)], meshes[(num_stages - 1) % p]
        for s in reversed(range(num_stages)):
            mesh = meshes[s % p]
            grad = move(grad, where, mesh)
            inputs = [grad, activations[(s, mb)]]
            if s in accumulated:
                inputs.append(accumulated[s])
            grad = fragment(mesh, f'"s{s}"(1)', s, mb, inputs,
                            "stablehlo.multiply")
            accumulated[s] = grad
            where = mesh
    outs = ", ".join(accumulated[s] for s in range(num_stages))
    types = ", ".join(mt(meshes[s % p]) for s in range(num_stages))
    lines.append(f"  func.return {outs} : {types}")
    lines.append("}")
    return "\n".join(lines) + "\n"


_FRAGMENT = re.compile(
    r'mpmd\.fragment<mesh="(?P<mesh>[^"]+)", origin=\[(?P<origin>[^\]]*)\]'
    r'[^>]*> \([^)]*\) \{call_counter = (?P<mb>\d+) : ui32\}')


def mesh_orders(module_text: str, short: bool = True) -> dict[str, list[str]]:
    """Per mesh, the fragments in program order: `F3`/`B3` (short, with the
    stage when a mesh has several: `F3s4`) or the origin text."""
    orders: dict[str, list[str]] = {}
    stages: dict[str, set[str]] = {}
    found = list(_FRAGMENT.finditer(module_text))
    for match in found:
        stages.setdefault(match["mesh"], set()).add(
            re.sub(r"\(\d+\)", "", match["origin"]))
    for match in found:
        mesh = match["mesh"]
        backward = "(" in match["origin"]
        if short:
            label = ("B" if backward else "F") + match["mb"]
            if len(stages[mesh]) > 1:
                label += re.sub(r'[^0-9]', "", match["origin"].split("(")[0])\
                    .join(["s", ""])
        else:
            label = f'{match["origin"]}#{match["mb"]}'
        orders.setdefault(mesh, []).append(label)
    return orders


def pipeline_module_with_weights(p: int, m: int,
                                 first_stage_input_gradient: bool = True) -> str:
    """Like `pipeline_module` (v = 1), with a weight per stage, so that each
    backward fragment has two results as after JAX's transpose: the input
    gradient, moved to the previous mesh, and the weight gradient,
    accumulated over microbatches on its own mesh and returned.

    F(s, i) = a * w_s. B(s, i) computes t = g * g from the incoming gradient
    g, then the input gradient t * w_s and the weight gradient t * a (a the
    activation F(s, i) read) plus the sum of the earlier microbatches'. The
    first stage's input gradient goes to the last mesh (as with embeddings
    tied to the output layer), so it leaves its mesh too; without
    `first_stage_input_gradient` the first stage computes none, as when the
    input is data.
    """
    meshes = [f"m{r}" for r in range(p)]
    topology = ", ".join(f'<"{mesh}" : <["x"=1]>>' for mesh in meshes)

    def mt(mesh: str) -> str:
        return f'!mpmd.mesh_tensor<"{mesh}", {_TENSOR}>'

    arg_types = [mt(meshes[0])] + [mt(meshes[s]) for s in range(p)]
    result_types = [mt(meshes[s]) for s in range(p)]
    if first_stage_input_gradient:
        result_types.append(mt(meshes[-1]))
    args = ", ".join(f"{name}: {t}" for name, t in
                     zip(["%x"] + [f"%w{s}" for s in range(p)], arg_types))
    lines = [f"func.func @main({args}) -> ({', '.join(result_types)})",
             f"    attributes {{topology = #mpmd.topology<{topology}>}} {{"]
    counter = 0

    def fresh() -> str:
        nonlocal counter
        counter += 1
        return f"%v{counter}"

    def fragment(mesh: str, origin: str, stage: int, mb: int,
                 inputs: list[str], body: list[str], returned: list[str]) -> str:
        result = fresh()
        arg_list = ", ".join(f"%a{k}: {_TENSOR}" for k in range(len(inputs)))
        types = ", ".join(mt(mesh) for _ in inputs)
        results = ", ".join(mt(mesh) for _ in returned)
        if len(returned) > 1:
            results = f"({results})"
            name = f"{result}:{len(returned)}"
        else:
            name = result
        lines.append(
            f'  {name} = mpmd.fragment<mesh="{mesh}", origin=[{origin}], '
            f'stage={stage}> ({", ".join(inputs)}) {{call_counter = {mb} : ui32}} '
            f"({arg_list}) {{\n"
            + "\n".join(f"    {op} : {_TENSOR}" for op in body) + "\n"
            f"    mpmd.return {', '.join(returned)} : "
            f"{', '.join(_TENSOR for _ in returned)}\n"
            f"  }} : ({types}) -> {results}")
        return result

    def move(value: str, source: str, target: str) -> str:
        if source == target:
            return value
        result = fresh()
        lines.append(f"  {result} = mpmd.transfer {value} : ({mt(source)}) -> {mt(target)}")
        return result

    inputs_of: dict[tuple[int, int], str] = {}
    outputs_of: dict[tuple[int, int], str] = {}
    for mb in range(m):
        value, where = "%x", meshes[0]
        for s in range(p):
            value = move(value, where, meshes[s])
            inputs_of[(s, mb)] = value
            value = fragment(meshes[s], f'"s{s}"', s, mb, [value, f"%w{s}"],
                             ["%y = stablehlo.multiply %a0, %a1"], ["%y"])
            outputs_of[(s, mb)] = value
            where = meshes[s]
    accumulated: dict[int, str] = {}
    input_gradients: list[str] = []
    for mb in range(m):
        grad, where = outputs_of[(p - 1, mb)], meshes[p - 1]
        for s in reversed(range(p)):
            grad = move(grad, where, meshes[s])
            inputs = [grad, inputs_of[(s, mb)], f"%w{s}"]
            body = ["%t = stablehlo.multiply %a0, %a0",
                    "%dx = stablehlo.multiply %t, %a2",
                    "%dw = stablehlo.multiply %t, %a1"]
            weight_gradient = "%dw"
            if s in accumulated:
                inputs.append(accumulated[s])
                body.append("%sum = stablehlo.add %dw, %a3")
                weight_gradient = "%sum"
            with_dx = s > 0 or first_stage_input_gradient
            result = fragment(meshes[s], f'"s{s}"(1)', s, mb, inputs, body,
                              (["%dx"] if with_dx else []) + [weight_gradient])
            if with_dx:
                grad, accumulated[s] = f"{result}#0", f"{result}#1"
            else:
                accumulated[s] = result
            where = meshes[s]
        if first_stage_input_gradient:
            input_gradients.append(move(grad, meshes[0], meshes[-1]))
    outs = [accumulated[s] for s in range(p)]
    if first_stage_input_gradient:
        # Only the last microbatch's gradient of x is returned; the others
        # still leave the first mesh.
        outs.append(input_gradients[-1])
    lines.append(f"  func.return {', '.join(outs)} : {', '.join(result_types)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


_ANY_FRAGMENT = re.compile(
    r'mpmd\.fragment<mesh="(?P<mesh>[^"]+)", origin=\[(?P<origin>[^\]]*)\]'
    r'[^>]*> \([^)]*\) \{(?P<attrs>[^}]*)\}')


def split_mesh_orders(module_text: str) -> dict[str, list[str]]:
    """Per mesh, the fragments in program order as `F3`, `B3` (input
    gradient, or a backward left whole) and `W3` (weight gradient)."""
    orders: dict[str, list[str]] = {}
    for match in _ANY_FRAGMENT.finditer(module_text):
        counter = re.search(r"call_counter = (\d+)", match["attrs"])
        if counter is None:
            continue
        if "mpmd.weight_gradient" in match["attrs"]:
            kind = "W"
        else:
            kind = "B" if "(" in match["origin"] else "F"
        orders.setdefault(match["mesh"], []).append(kind + counter[1])
    return orders


# Expected per-mesh orders for p = 4 meshes and m = 8 microbatches, shared
# by the tests of the built-in schedules and of Shardy's registry.

def seq(text: str) -> list[str]:
    return text.split()


GPIPE = seq("F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7")
ONE_F_ONE_B = {
    "m0": seq("F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7"),
    "m1": seq("F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7"),
    "m2": seq("F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7"),
    "m3": seq("F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"),
}

# ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2023) on mesh r:
# F and B in 1F1B order (p - r warm-up forwards, then one B per F), and W_k
# deferred until after B_(k+r), before the next F: the first mesh runs each W
# right after its B, mesh r keeps r weight gradients pending, so every mesh
# holds at most (p - r) + r = p microbatches (1F1B's peak). The W's still
# pending after the last B close the step, filling what were 1F1B's drain
# bubbles.
ZB_H1 = {
    "m0": seq("F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 "
              "B4 W4 B5 W5 B6 W6 B7 W7"),
    "m1": seq("F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 "
              "B5 W4 B6 W5 B7 W6 W7"),
    "m2": seq("F0 F1 B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 "
              "B6 W4 B7 W5 W6 W7"),
    "m3": seq("F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 "
              "B7 W4 W5 W6 W7"),
}
