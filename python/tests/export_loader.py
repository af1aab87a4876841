"""Runs an mpmd export in a process that cannot import the compiler: the
compiler's extension and the C++ step loop's are blocked before `mpmd` is
imported, so the export is read and run by the runtime alone, walking its
plan in Python.

    export_loader.py EXPORT IO [--distributed]

EXPORT: the bytes of `Exported.serialize()`. IO: an .npz with the flat
arguments (`in0`, ...) and the expected flat results (`out0`, ...). The
export runs on `default_topology()` (the job's global devices in order
with --distributed, a job started by `python -m mpmd.launch`); every
result shard this process holds is compared with the expected one.
Prints `export ran without the compiler: N shards equal` on success.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
# `import` of these raises ImportError from now on.
sys.modules["mpmd._mpmd_compiler"] = None
sys.modules["mpmd._mpmd_runtime"] = None

import jax  # noqa: E402
import numpy as np  # noqa: E402

import mpmd.export  # noqa: E402


def main() -> None:
    path, io_path = sys.argv[1], sys.argv[2]
    if "--distributed" in sys.argv:
        from mpmd import distributed  # noqa: PLC0415

        distributed.initialize(heartbeat_timeout_seconds=10)
    with open(path, "rb") as file:
        exported = mpmd.export.deserialize(file.read())
    data = np.load(io_path)
    leaves = [data[f"in{i}"] for i in range(exported.in_tree.num_leaves)]
    args, kwargs = jax.tree_util.tree_unflatten(exported.in_tree, leaves)
    results = exported.call(*args, **kwargs)
    shards = 0
    for i, leaf in enumerate(jax.tree.leaves(results)):
        expected = data[f"out{i}"]
        for shard in leaf.addressable_shards:
            np.testing.assert_allclose(
                np.asarray(shard.data), expected[shard.index], rtol=1e-5,
                atol=1e-6, err_msg=f"result {i} on device {shard.device}")
            shards += 1
    from mpmd.runtime.executor import native_step_loop  # noqa: PLC0415

    loaded = [name for name in ("mpmd._mpmd_compiler", "mpmd._mpmd_runtime",
                                "mpmd.compiler", "mpmd.stages", "mpmd.lower")
              if sys.modules.get(name) is not None]
    assert not loaded and not native_step_loop(), loaded
    print(f"export ran without the compiler: {shards} shards equal",
          flush=True)


if __name__ == "__main__":
    main()
