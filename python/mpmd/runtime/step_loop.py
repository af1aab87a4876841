"""The plan's steps in a Python loop: what runs where the C++ step loop
(`mpmd._mpmd_runtime.StepLoop`) is missing or built for another Python (an
export loaded without the build, `mpmd.export`), with its interface and
its semantics, so the same calls run in the same order.

    loop = PythonStepLoop(steps, num_values, outputs)
    results = loop.run(inputs)

Each step is `(is_call, callable, inputs, constants, outputs, free,
target)`: a call runs `callable(*values, *constants)` and binds its
results to `outputs`; a move runs `callable(value, target)` and binds the
one result; then the `free` values are dropped (their buffers are freed,
or donated, at their last use). On a failure, `failed_step` is the step's
index and `failed_arguments` what it was given.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["PythonStepLoop"]


class PythonStepLoop:
    def __init__(self, steps: Sequence[tuple], num_values: int,
                 outputs: Sequence[int]):
        def inside(values: Sequence[int]) -> bool:
            return all(0 <= value < num_values for value in values)

        self.steps = []
        for step in steps:
            step = tuple(step)
            if len(step) != 7:
                raise ValueError("a step is (is_call, callable, inputs, "
                                 "extra, outputs, free, target)")
            is_call, function, ins, extra, outs, free, target = step
            ins, extra, outs, free = (tuple(ins), tuple(extra), tuple(outs),
                                      tuple(free))
            if not is_call and (len(ins) != 1 or len(outs) != 1):
                raise ValueError("a transfer step has one input and one "
                                 "output")
            if not (inside(ins) and inside(outs) and inside(free)):
                raise ValueError("a step names a value outside the plan")
            self.steps.append((bool(is_call), function, ins, extra, outs,
                               free, target))
        if not inside(outputs):
            raise ValueError("an output names a value outside the plan")
        self.num_values = num_values
        self.outputs = list(outputs)
        self.failed_step = -1
        self.failed_arguments: tuple[Any, ...] = ()

    def run(self, inputs: Sequence[Any]) -> list[Any]:
        self.failed_step = -1
        self.failed_arguments = ()
        if len(inputs) > self.num_values:
            raise ValueError("more inputs than the plan has values")
        env: list[Any] = [None] * self.num_values
        env[:len(inputs)] = inputs
        made = [True] * len(inputs) + [False] * (self.num_values -
                                                 len(inputs))
        for index, (is_call, function, ins, extra, outs, free,
                    target) in enumerate(self.steps):
            if not all(made[value] for value in ins):
                self.failed_step = index
                raise ValueError("a step reads a value no step has made")
            arguments = [env[value] for value in ins]
            try:
                if is_call:
                    results = function(*arguments, *extra)
                    if len(results) != len(outs):
                        raise ValueError(
                            "a program returned a different number of "
                            "results than the plan says")
                    for value, result in zip(outs, results):
                        env[value] = result
                        made[value] = True
                else:
                    env[outs[0]] = function(arguments[0], target)
                    made[outs[0]] = True
            except Exception:
                self.failed_step = index
                self.failed_arguments = tuple(arguments) + (
                    tuple(extra) if is_call else ())
                raise
            for value in free:
                env[value] = None
                made[value] = False
        if not all(made[value] for value in self.outputs):
            raise ValueError("an output of the plan was never made")
        return [env[value] for value in self.outputs]
