# lit configuration for the mpmd test suite.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "MPMD"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mpmd_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.mpmd_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
config.substitutions.append(("%mpmd_src_root", config.mpmd_src_root))
llvm_config.add_tool_substitutions(["mpmd-opt"], [config.mpmd_tools_dir])
config.substitutions.append(("%python", config.python_executable))
# Tests that run Python (e.g. regenerating JAX modules) import the in-tree
# package; JAX sees 8 CPU devices as in the pytest suites.
config.environment["PYTHONPATH"] = os.path.join(config.mpmd_obj_root,
                                                "python_packages")
config.environment["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
config.environment["JAX_PLATFORMS"] = "cpu"
config.substitutions.append(("%mpmd_obj_root", config.mpmd_obj_root))
