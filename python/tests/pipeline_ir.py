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
