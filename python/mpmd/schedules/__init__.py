"""Pipeline schedules: one home for the concept.

    config = mpmd.make_config(topology, assignment,
                              partitioning_options={"pipeline_schedule": "1f1b"})

- `core`: what a schedule is as users state it (a built-in name, a table,
  a comparator), the fragments it is evaluated over (`FragmentInfo`), and
  its evaluation into the per-mesh order the compiler applies; merge rules.
- `rules`: Shardy:MPMD's rule API (`PipelineSchedule`, schedule and merge
  rule builders), evaluated into the same order (Shardy's module name
  `mpmd.pipeline` re-exports it).
- `registry`: Shardy's registry of named schedules and its predicates
  (`mpmd.pipeline_registry`, `mpmd.schedule_impl`).
- `v`: the V-shaped schedules ZB-V and DualPipe-V, their orders and
  simulation (`mpmd.v_schedules`).
- `orders`: a pipeline's ops, placements and orders, simulated with costs.
- `list_schedule`: orders built from costs by a list scheduler over that
  simulation; `from_costs` wraps it as `cost_driven(costs, in_flight=N)`,
  a schedule for `pipeline_schedule` or a loop; `zero_bubble_paper` holds
  the Zero Bubble paper's measured costs and rates they are compared to.

This package's own names are `core`'s and `cost_driven`; the others are
its submodules.
"""

from mpmd.schedules.core import (BUILTIN_SCHEDULES, FragmentInfo,
                                 FragmentKind, ScheduleError, ScheduleKind,
                                 explicit_order, merge_pairs)
from mpmd.schedules.from_costs import CostDrivenSchedule, cost_driven

__all__ = ["BUILTIN_SCHEDULES", "CostDrivenSchedule", "FragmentInfo",
           "FragmentKind", "ScheduleError", "ScheduleKind", "cost_driven",
           "explicit_order", "merge_pairs"]
