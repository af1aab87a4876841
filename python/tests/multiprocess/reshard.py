"""One process of a multi-controller job (started by `python -m mpmd.launch
-n 2 --devices-per-process 4` from test_multiprocess.py): a weight sync.
The "training" mesh is process 0's 4 devices as (data=2, model=2), the
"generation" mesh process 1's 4 devices as (x=4). A tree of parameters
sharded over the training mesh moves with `mpmd.reshard` to the
generation mesh with another layout, then back; each process checks the
shards it holds against the values.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import mpmd
import mpmd.distributed


def main() -> None:
    mpmd.distributed.initialize(heartbeat_timeout_seconds=10)
    me = jax.process_index()
    devices = np.array(jax.devices())
    train = Mesh(devices[:4].reshape(2, 2), ("data", "model"))
    generate = Mesh(devices[4:], ("x",))
    values = {"w": np.arange(16 * 8, dtype=np.float32).reshape(16, 8),
              "b": np.arange(8, dtype=np.float32)}
    layouts = {"w": P("data", "model"), "b": P("model")}
    params = {name: jax.make_array_from_callback(
        value.shape, NamedSharding(train, layouts[name]),
        lambda index, value=value: value[index], dtype=value.dtype)
        for name, value in values.items()}

    moved = mpmd.reshard(params, {"w": NamedSharding(generate, P(None, "x")),
                                  "b": NamedSharding(generate, P())})
    back = mpmd.reshard(moved, {name: NamedSharding(train, layouts[name])
                                for name in values})
    shards = 0
    for tree in (moved, back):
        for name, leaf in tree.items():
            for shard in leaf.addressable_shards:
                np.testing.assert_array_equal(
                    np.asarray(shard.data), values[name][shard.index],
                    err_msg=f"{name} on device {shard.device}")
                shards += 1
    held = {name: len(leaf.addressable_shards) for name, leaf in moved.items()}
    assert held == ({"w": 0, "b": 0} if me == 0 else {"w": 4, "b": 4}), held
    print(f"process {me}: {shards} shards equal after reshard there and back",
          flush=True)


if __name__ == "__main__":
    main()
