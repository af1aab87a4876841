"""What a job's processes and their launcher share: environment variables.

    env[FAILURE_FILE] = "/tmp/job/failure-1"     # the launcher, per process

`python -m mpmd.launch` starts the processes; the runtime in each reads
these. They live here, without JAX, so that the launcher imports them
from the runtime without loading JAX.
"""

__all__ = ["FAILURE_FILE"]

# The environment variable naming the file where a process that an
# uncaught exception ends writes what it raised, for the launcher to name
# the process that failed first.
FAILURE_FILE = "MPMD_FAILURE_FILE"
