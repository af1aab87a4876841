"""Tests of mpmd.compiler, the Python face of the C++ compiler."""

from __future__ import annotations

import threading
import time

import pytest

import mpmd
from mpmd import compiler
from mpmd.errors import CompilerError, Diagnostic, MpmdError

IDENTITY = """\
func.func @identity(%arg0: i32) -> i32 {
  return %arg0 : i32
}
"""

# Line 2 uses %arg0 with the wrong type: a parser error at 2:10, with a note
# at its definition (1:16).
TYPE_MISMATCH = """\
func.func @bad(%arg0: i32) -> i32 {
  return %arg0 : i64
}
"""

# Parses, but the verifier rejects func.return at 2:3.
MISSING_RESULT = """\
func.func @bad() -> i32 {
  return
}
"""


def test_parse_returns_the_printed_module():
    printed = mpmd.parse(IDENTITY)
    assert printed.startswith("module {")
    assert "func.func @identity(%arg0: i32) -> i32" in printed
    assert "return %arg0 : i32" in printed
    # The printed form is stable: parsing it again gives the same text.
    assert mpmd.parse(printed) == printed


def test_parse_keeps_a_named_module_and_its_attributes():
    text = 'module @m attributes {mhlo.num_partitions = 2 : i32} {\n}\n'
    printed = mpmd.parse(text)
    assert printed.startswith("module @m attributes")
    assert "mhlo.num_partitions = 2 : i32" in printed


def test_generic_printing():
    printed = mpmd.parse(IDENTITY, generic=True)
    assert printed.startswith('"builtin.module"() ({')
    assert '"func.func"() <{' in printed
    assert 'sym_name = "identity"' in printed
    assert '"func.return"(%arg0) : (i32) -> ()' in printed
    # Generic text parses back to the same module.
    assert mpmd.parse(printed) == mpmd.parse(IDENTITY)


def test_unknown_dialects_pass_through_unchanged():
    text = """\
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "f"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "chlo.erf"(%arg0) {mhlo.frontend_attributes = {x = "y"}, s = #sdy.sharding<@mesh, [{"x"}]>} : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"""
    assert mpmd.parse(text, generic=True) == text


def test_parse_error_has_location_and_message():
    with pytest.raises(CompilerError) as info:
        mpmd.parse(TYPE_MISMATCH)
    error = info.value
    assert len(error.diagnostics) == 1
    diagnostic = error.diagnostics[0]
    assert diagnostic.severity == "error"
    assert diagnostic.location == "<input>:2:10"
    assert "expects different type than prior uses" in diagnostic.message
    assert diagnostic.notes == (
        Diagnostic("note", "<input>:1:16", "prior use here"),)
    # The exception's message lists the diagnostics with their locations.
    text = str(error)
    assert "<input>:2:10: error: use of value '%arg0'" in text
    assert "  <input>:1:16: note: prior use here" in text
    assert error.errors == [diagnostic]


def test_verifier_error_has_location_and_message():
    with pytest.raises(CompilerError) as info:
        mpmd.verify(MISSING_RESULT)
    (diagnostic,) = info.value.errors
    assert diagnostic.location == "<input>:2:3"
    assert "'func.return' op has 0 operands" in diagnostic.message


def test_source_name_names_the_file_in_locations():
    with pytest.raises(CompilerError) as info:
        mpmd.parse(TYPE_MISMATCH, source_name="step.mlir")
    assert info.value.diagnostics[0].location == "step.mlir:2:10"


def test_verify_accepts_a_valid_module():
    assert mpmd.verify(IDENTITY) is None


def test_mpmd_error_is_the_base_class():
    assert issubclass(CompilerError, MpmdError)
    assert issubclass(MpmdError, Exception)
    with pytest.raises(MpmdError):
        mpmd.parse("this is not MLIR")


def test_non_string_input_is_a_type_error():
    with pytest.raises(TypeError):
        mpmd.parse(b"module {}")  # type: ignore[arg-type]


def test_canonicalize_runs():
    # Canonicalization folds the cast round trip to %arg0, erases the dead
    # casts and the unreachable block.
    text = """\
func.func @f(%arg0: i32) -> i32 {
  %0 = builtin.unrealized_conversion_cast %arg0 : i32 to i64
  %1 = builtin.unrealized_conversion_cast %0 : i64 to i32
  return %1 : i32
^bb1:
  return %arg0 : i32
}
"""
    before = mpmd.parse(text)
    assert "unrealized_conversion_cast" in before and "^bb1" in before
    for pipeline in ["builtin.module(canonicalize)", "canonicalize",
                     " builtin.module ( canonicalize ) "]:
        after = mpmd.run_pipeline(text, pipeline)
        assert "unrealized_conversion_cast" not in after, pipeline
        assert "^bb1" not in after, pipeline
        assert "return %arg0 : i32" in after, pipeline


def test_pipeline_of_several_passes_and_nesting():
    text = """\
func.func private @unused() -> ()
func.func @used(%arg0: i32) -> i32 {
  return %arg0 : i32
}
"""
    after = mpmd.run_pipeline(
        text, "builtin.module(func.func(cse),symbol-dce,canonicalize)")
    assert "@unused" not in after
    assert "@used" in after


def test_run_pipeline_can_print_generic():
    after = mpmd.run_pipeline(IDENTITY, "canonicalize", generic=True)
    assert '"func.return"(%arg0)' in after


def test_unknown_pass_raises():
    with pytest.raises(CompilerError) as info:
        mpmd.run_pipeline(IDENTITY, "builtin.module(canonicalize,no-such-pass)")
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.severity == "error"
    # Column 29 of the pipeline string is where `no-such-pass` starts.
    assert diagnostic.location == "<pass-pipeline>:1:29"
    assert "'no-such-pass' does not refer to a registered pass" in (
        diagnostic.message)
    assert "no-such-pass" in str(info.value)


def test_unknown_pass_option_raises():
    with pytest.raises(CompilerError) as info:
        mpmd.run_pipeline(IDENTITY, "canonicalize{no-such-option=1}")
    assert "no-such-option" in str(info.value)


def test_malformed_pipeline_raises():
    with pytest.raises(CompilerError, match="unbalanced parentheses"):
        mpmd.run_pipeline(IDENTITY, "builtin.module(func.func(cse)")


def test_bad_module_is_reported_before_the_pipeline_runs():
    with pytest.raises(CompilerError) as info:
        mpmd.run_pipeline(TYPE_MISMATCH, "canonicalize")
    assert info.value.diagnostics[0].location == "<input>:2:10"


def test_failing_pass_raises():
    # Canonicalization changes this module, so it cannot converge in one
    # iteration; test-convergence turns that into a pass failure.
    text = """\
func.func @f(%arg0: i32) -> i32 {
  %0 = builtin.unrealized_conversion_cast %arg0 : i32 to i64
  %1 = builtin.unrealized_conversion_cast %0 : i64 to i32
  return %1 : i32
}
"""
    pipeline = "canonicalize{max-iterations=1 test-convergence=true}"
    with pytest.raises(CompilerError) as info:
        mpmd.run_pipeline(text, pipeline)
    assert info.value.summary == f"pass pipeline '{pipeline}' failed"
    # Two iterations are enough, so the same pass then succeeds.
    mpmd.run_pipeline(text, pipeline.replace("=1", "=2"))


def test_concurrent_calls_are_independent():
    texts = [IDENTITY.replace("@identity", f"@f{i}") for i in range(8)]
    results: dict[int, str] = {}
    failures: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(5):
                results[i] = mpmd.run_pipeline(texts[i], "canonicalize")
            with pytest.raises(CompilerError):
                mpmd.parse(TYPE_MISMATCH)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    for i in range(8):
        assert f"@f{i}(" in results[i]


def _large_module(num_ops: int) -> str:
    body = "\n".join(
        f'    %{i + 1} = "test.op"(%{i}) : (i32) -> i32' for i in range(num_ops))
    return (f"func.func @f(%0: i32) -> i32 {{\n{body}\n"
            f"    return %{num_ops} : i32\n}}\n")


def test_gil_is_released_while_compiling():
    text = _large_module(60000)
    stamps: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    time.sleep(0.02)
    start = time.perf_counter()
    compiler.parse(text)
    end = time.perf_counter()
    stop.set()
    ticker.join()
    duration = end - start
    if duration < 0.05:
        pytest.skip(f"compile too fast ({duration:.3f}s) to observe")
    margin = 0.01
    during = [t for t in stamps if start + margin < t < end - margin]
    # With the GIL held the ticker could not run at all inside the window.
    assert len(during) >= 5, (len(during), duration)


@pytest.mark.parametrize("mode, reason", [
    ("signal", ""),
    ("fatal-error", " (LLVM fatal error: mpmd-test-crash: a fatal error on "
                    "purpose)"),
])
def test_a_crash_in_a_pass_is_a_compiler_error(mode, reason, tmp_path):
    """A signal or an LLVM fatal error inside the compiler does not take the
    process down: it is a CompilerError naming the pass and the op, with a
    reproducer mpmd-opt replays."""
    import re  # noqa: PLC0415
    import subprocess  # noqa: PLC0415

    pipeline = f"mpmd-test-crash{{mode={mode}}}"
    with pytest.raises(CompilerError) as caught:
        compiler.run_pipeline(IDENTITY, f"canonicalize,{pipeline}",
                              source_name="crash.mlir")
    message = str(caught.value)
    assert re.match(
        r"the compiler crashed in pass 'mpmd-test-crash' on 'builtin.module' "
        rf"at crash\.mlir:\d+:\d+{re.escape(reason)}; reproduce it with "
        r"`mpmd-opt --run-reproducer ", message), message
    path = re.search(r"--run-reproducer (\S+)`", message).group(1)
    with open(path) as reproducer:
        text = reproducer.read()
    assert IDENTITY in text
    assert f'pipeline: "builtin.module(canonicalize,{pipeline})"' in text
    import pathlib  # noqa: PLC0415
    opt = pathlib.Path(mpmd.__file__).parents[2] / "bin" / "mpmd-opt"
    if opt.exists():
        replay = subprocess.run([str(opt), "--run-reproducer", path],
                                capture_output=True, text=True)
        assert replay.returncode != 0
    # The process and the compiler keep working.
    assert "func.func @identity" in compiler.run_pipeline(IDENTITY,
                                                          "canonicalize")


def test_crashes_in_threads_are_recovered_independently():
    results: list[str] = []

    def work(crash: bool) -> None:
        try:
            compiler.run_pipeline(
                IDENTITY, "mpmd-test-crash{mode=signal}" if crash
                else "canonicalize")
            results.append("ok")
        except CompilerError as error:
            results.append("crashed" if "crashed" in str(error) else "other")

    threads = [threading.Thread(target=work, args=(i % 2 == 0,))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["crashed"] * 4 + ["ok"] * 4


def test_text_the_mlir_parser_crashes_on_is_a_diagnostic():
    # MLIR 22's parser segfaults on dense arrays of index type (found by
    # mpmd-fuzz); we report it instead, at its position.
    text = '"test.op"() {a = array<index: 1>} : () -> ()  // array<index: 2>\n'
    with pytest.raises(mpmd.CompilerError) as raised:
        mpmd.parse(text, source_name="hazard.mlir")
    (error,) = raised.value.errors
    assert error.location == "hazard.mlir:1:18"
    assert "dense array of index type" in error.message
    # In a comment or a string it is text, not an attribute.
    assert "array<index: 1>" in mpmd.parse(
        '"test.op"() {s = "array<index: 1>"} : () -> ()  // array<index: 1>\n')
