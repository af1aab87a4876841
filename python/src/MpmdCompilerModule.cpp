//===- MpmdCompilerModule.cpp - nanobind module mpmd._mpmd_compiler -------===//
//
// A thin Python face of the mpmd compiler: parse, verify and transform MLIR
// text. Every call runs in an MLIRContext of its own (taken from a small
// pool of them, see ContextPool), without the GIL, and
// collects diagnostics instead of printing them; a failure raises
// `_mpmd_compiler.DiagnosticError(summary, diagnostics)`, where each diagnostic
// is a `(severity, location, message, notes)` tuple and `notes` is a list of
// such tuples (with empty notes).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/OpCatalog.h"
#include "mpmd/InitAll.h"
#include "mpmd/Support/ParserGuards.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/ModuleUtils.h"
#include "mpmd/Transforms/Common/OptionParsers.h"
#include "mpmd/Transforms/Export/Passes.h"
#include "mpmd/Transforms/Import/AutoAssign.h"
#include "mpmd/Transforms/Import/Passes.h"
#include "mpmd/Transforms/Optimize/Passes.h"
#include "mpmd/Transforms/Partition/PartitionPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <mutex>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

/// One diagnostic as Python sees it; notes never carry notes themselves.
struct CollectedDiagnostic {
  std::string severity;
  std::string location;
  std::string message;
  std::vector<CollectedDiagnostic> notes;
};

/// What a compiler call produced: the printed module (and the execution
/// plan when asked for), or diagnostics.
struct CompileOutcome {
  std::optional<std::string> text;
  std::string plan;
  std::string failureSummary;
  std::vector<CollectedDiagnostic> diagnostics;
  // The run crashed (a signal or a fatal error caught by runGuarded): its
  // context may be corrupt and is never used again.
  bool crashed = false;
};

llvm::StringRef severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Note:
    return "note";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

/// `file:line:col` when the location (or one nested in it) has a position,
/// "" when unknown, and the location's own syntax otherwise.
std::string formatLocation(mlir::Location loc) {
  if (auto fileLoc = loc->findInstanceOf<mlir::FileLineColRange>())
    return (fileLoc.getFilename().getValue() + ":" +
            llvm::Twine(fileLoc.getStartLine()) + ":" +
            llvm::Twine(fileLoc.getStartColumn()))
        .str();
  if (llvm::isa<mlir::UnknownLoc>(loc))
    return "";
  std::string printed;
  llvm::raw_string_ostream os(printed);
  loc.print(os);
  return printed;
}

CollectedDiagnostic collect(const mlir::Diagnostic &diag) {
  CollectedDiagnostic result{severityName(diag.getSeverity()).str(),
                             formatLocation(diag.getLocation()), diag.str(),
                             {}};
  for (const mlir::Diagnostic &note : diag.getNotes())
    result.notes.push_back({severityName(note.getSeverity()).str(),
                            formatLocation(note.getLocation()), note.str(),
                            {}});
  return result;
}

/// MLIR contexts with every mpmd dialect, kept between compiler calls:
/// making one and loading its dialects again (StableHLO registers some 120
/// ops) was about a tenth of partitioning a small program. A context goes
/// back only from a run that did not crash, only while the text parsed
/// into it stays under the budget (what a context uniques, large constants
/// among them, lives as long as it does), and only while the IFRT dialect
/// is not loaded in it: mpmd-lower-to-ifrt writes IFRT ops by name with
/// opaque types, which a context that has read IFRT IR would verify as
/// our IFRT subset's.
class ContextPool {
public:
  struct Lease {
    std::unique_ptr<mlir::MLIRContext> context;
    size_t parsedBytes = 0;
  };

  /// What the pool did so far (for tests and curious users).
  struct Stats {
    size_t created = 0;    // contexts made
    size_t idle = 0;       // waiting in the pool now
    size_t overBudget = 0; // dropped after parsing more than the budget
  };

  static Lease take() {
    {
      std::lock_guard<std::mutex> lock(mutex());
      std::vector<Lease> &idle = pool();
      if (!idle.empty()) {
        Lease lease = std::move(idle.back());
        idle.pop_back();
        return lease;
      }
      ++state().stats.created;
    }
    mlir::DialectRegistry registry;
    mlir::mpmd::registerAllDialects(registry);
    auto context = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    context->allowUnregisteredDialects(true);
    // The location says where; a dump of the op would flood the message.
    context->printOpOnDiagnostic(false);
    return {std::move(context), 0};
  }

  static void give(Lease lease) {
    if (lease.context->getLoadedDialect(kIfrtDialect))
      return;
    std::lock_guard<std::mutex> lock(mutex());
    if (lease.parsedBytes > state().budgetBytes) {
      ++state().stats.overBudget;
      return;
    }
    if (pool().size() < state().maxIdle)
      pool().push_back(std::move(lease));
  }

  static Stats stats() {
    std::lock_guard<std::mutex> lock(mutex());
    Stats result = state().stats;
    result.idle = pool().size();
    return result;
  }

  /// Sets the limits (kept: zero), returns the old ones; lower limits
  /// apply to contexts given back from then on.
  static std::pair<size_t, size_t> setLimits(size_t maxIdle,
                                             size_t budgetBytes) {
    std::lock_guard<std::mutex> lock(mutex());
    std::pair<size_t, size_t> old{state().maxIdle, state().budgetBytes};
    if (maxIdle)
      state().maxIdle = maxIdle;
    if (budgetBytes)
      state().budgetBytes = budgetBytes;
    return old;
  }

private:
  static constexpr llvm::StringLiteral kIfrtDialect = "ifrt";
  struct State {
    size_t maxIdle = 4;
    size_t budgetBytes = size_t(64) << 20;
    Stats stats;
  };
  static State &state() {
    static State instance;
    return instance;
  }
  static std::mutex &mutex() {
    static std::mutex instance;
    return instance;
  }
  // Leaked on purpose: contexts are not destroyed after the interpreter
  // has unloaded the dialects' libraries at exit.
  static std::vector<Lease> &pool() {
    static auto *idle = new std::vector<Lease>();
    return *idle;
  }
};

/// A pooled context with a handler that records diagnostics into `sink`;
/// the context goes back to the pool when the session ends, unless
/// `abandon()` said the run crashed.
class CompilerSession {
public:
  explicit CompilerSession(std::vector<CollectedDiagnostic> &sink)
      : lease(ContextPool::take()),
        handler(std::make_unique<mlir::ScopedDiagnosticHandler>(
            lease.context.get(), [&sink](mlir::Diagnostic &diag) {
              sink.push_back(collect(diag));
              return mlir::success();
            })) {}

  ~CompilerSession() {
    handler.reset();
    if (abandoned)
      (void)lease.context.release(); // left as the crash left it
    else
      ContextPool::give(std::move(lease));
  }

  CompilerSession(const CompilerSession &) = delete;
  CompilerSession &operator=(const CompilerSession &) = delete;

  mlir::MLIRContext &getContext() { return *lease.context; }

  /// Counts `bytes` of text parsed into the context (see ContextPool).
  void noteParsed(size_t bytes) { lease.parsedBytes += bytes; }

  /// The run crashed: the context is neither pooled nor destroyed.
  void abandon() { abandoned = true; }

private:
  ContextPool::Lease lease;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  bool abandoned = false;
};

mlir::OwningOpRef<mlir::ModuleOp> parseModule(mlir::MLIRContext &context,
                                              llvm::StringRef text,
                                              llvm::StringRef sourceName) {
  if (mlir::mpmd::ParserHazard hazard = mlir::mpmd::findParserHazard(text)) {
    auto [line, column] = hazard.lineAndColumn(text);
    mlir::emitError(mlir::FileLineColLoc::get(&context, sourceName, line,
                                              column))
        << hazard.message;
    return nullptr;
  }
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, sourceName);
  if (!module || mlir::failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

std::string printModule(mlir::ModuleOp module, bool generic) {
  mlir::OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  return mlir::mpmd::printBuffered(
      [&](llvm::raw_ostream &os) { module->print(os, flags); });
}

/// Turns the pass pipeline parser's report ("<buffer>:1:COL: error: MSG" and
/// a caret line) into a diagnostic located in the user's pipeline string;
/// `offset` is where the parsed elements start in it.
CollectedDiagnostic pipelineDiagnostic(llvm::StringRef report, size_t offset) {
  llvm::StringRef firstLine = report.trim().split('\n').first;
  auto [position, message] = firstLine.split(": error: ");
  if (message.empty()) {
    // Option errors come as several lines without a position.
    llvm::SmallVector<llvm::StringRef> lines;
    report.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    return {"error", "<pass-pipeline>", llvm::join(lines, "; "), {}};
  }
  unsigned column = 0;
  if (position.rsplit(':').second.getAsInteger(10, column))
    return {"error", "<pass-pipeline>", message.str(), {}};
  return {"error",
          ("<pass-pipeline>:1:" + llvm::Twine(column + offset)).str(),
          message.str(),
          {}};
}

/// Fills `pm` from `pipeline`: either `builtin.module(...)` or the bare
/// elements of a pipeline on the module (`canonicalize,cse`, a registered
/// pipeline name, `func.func(cse)`).
mlir::LogicalResult buildPipeline(llvm::StringRef pipeline,
                                  mlir::PassManager &pm,
                                  CollectedDiagnostic &error) {
  llvm::StringRef elements = pipeline.trim();
  llvm::StringRef anchored = elements;
  if (anchored.consume_front(mlir::ModuleOp::getOperationName()) &&
      anchored.ltrim().starts_with("(") && anchored.ends_with(")"))
    elements = anchored.ltrim().drop_front().drop_back();
  std::string report, optionError;
  llvm::raw_string_ostream os(report);
  mlir::mpmd::optionErrorSink = &optionError;
  mlir::LogicalResult parsed = mlir::parsePassPipeline(elements, pm, os);
  mlir::mpmd::optionErrorSink = nullptr;
  if (mlir::succeeded(parsed))
    return mlir::success();
  error = pipelineDiagnostic(report, elements.data() - pipeline.data());
  // What was wrong with an mpmd option's value, which the parser's report
  // leaves out.
  if (!optionError.empty())
    error.message += ": " + optionError;
  return mlir::failure();
}

/// The reason of the last LLVM fatal error on this thread, kept for the
/// report of the crash it causes.
thread_local std::string fatalErrorReason;

void recordFatalError(void *, const char *reason, bool) {
  if (!llvm::CrashRecoveryContext::GetCurrent()) {
    // Not ours: LLVM exits the process after this returns.
    llvm::errs() << "LLVM ERROR: " << reason << "\n";
    return;
  }
  fatalErrorReason = reason;
}

/// Where the compiler is, for the report of a crash: the pass running and
/// the op it runs on, empty outside passes.
struct CompilerPosition {
  std::string pass;
  std::string op;
  std::string location;
};

class TrackPosition : public mlir::PassInstrumentation {
public:
  explicit TrackPosition(CompilerPosition &position) : position(position) {}

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override {
    position.pass = pass->getArgument().empty() ? pass->getName().str()
                                                : pass->getArgument().str();
    position.op = op->getName().getStringRef().str();
    position.location = formatLocation(op->getLoc());
  }
  void runAfterPass(mlir::Pass *, mlir::Operation *) override {
    position.pass.clear();
  }
  void runAfterPassFailed(mlir::Pass *, mlir::Operation *) override {
    position.pass.clear();
  }

private:
  CompilerPosition &position;
};

/// `elements` as a pipeline anchored on the module, as reproducers name it.
std::string anchoredPipeline(llvm::StringRef pipeline) {
  llvm::StringRef trimmed = pipeline.trim();
  if (trimmed.starts_with(mlir::ModuleOp::getOperationName()))
    return trimmed.str();
  return (mlir::ModuleOp::getOperationName() + "(" + trimmed + ")").str();
}

/// Writes the input and the pipeline in the form `mpmd-opt --run-reproducer`
/// replays (MLIR's reproducer format). Returns the path, or "" on failure.
std::string writeReproducer(llvm::StringRef text, const std::string *pipeline) {
  llvm::SmallString<128> path;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("mpmd-crash", "mlir", fd, path))
    return "";
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << text << "\n";
  if (pipeline) {
    std::string escaped;
    for (char c : anchoredPipeline(*pipeline)) {
      if (c == '"' || c == '\\')
        escaped.push_back('\\');
      escaped.push_back(c);
    }
    os << "\n{-#\n  external_resources: {\n    mlir_reproducer: {\n"
       << "      pipeline: \"" << escaped << "\",\n"
       << "      disable_threading: true,\n      verify_each: true\n"
       << "    }\n  }\n#-}\n";
  }
  return path.str().str();
}

/// What a guarded compiler run does: fills the outcome, keeps `position`
/// up to date, and sets `pipeline` to the textual pipeline it runs (for a
/// reproducer).
using CompileBody = llvm::function_ref<void(
    CompileOutcome &outcome, CompilerPosition &position, std::string &pipeline)>;

/// Runs `body` on `text`. A crash inside it (a signal, or an LLVM fatal
/// error) does not take the Python process down: it becomes a failure
/// naming the pass and op, with a reproducer written for `mpmd-opt`.
CompileOutcome runGuarded(const std::string &text, CompileBody body) {
  CompileOutcome outcome;
  CompilerPosition position;
  std::string ranPipeline;
  fatalErrorReason.clear();
  llvm::CrashRecoveryContext recovery;
  if (recovery.RunSafely([&] { body(outcome, position, ranPipeline); }))
    return outcome;
  const std::string *pipeline = ranPipeline.empty() ? nullptr : &ranPipeline;
  // What the crashed run built is abandoned: its context may be corrupt.
  CompileOutcome crashed;
  crashed.crashed = true;
  crashed.diagnostics = outcome.diagnostics;
  std::string where =
      position.pass.empty()
          ? std::string("while parsing, verifying or printing the module")
          : "in pass '" + position.pass + "' on '" + position.op + "'" +
                (position.location.empty() ? "" : " at " + position.location);
  std::string reproducer = writeReproducer(text, pipeline);
  if (!fatalErrorReason.empty())
    where += " (LLVM fatal error: " + fatalErrorReason + ")";
  crashed.failureSummary =
      "the compiler crashed " + where +
      (reproducer.empty()
           ? std::string()
           : "; reproduce it with `mpmd-opt --run-reproducer " + reproducer +
                 "` and report it");
  return crashed;
}

/// A pass manager on the module that tracks `position`. It verifies once
/// after the whole pipeline (the callers do) rather than after each pass:
/// on unrolled programs that halves the compiler's time. mpmd-opt (and the
/// lit tests) still verify after each pass.
std::unique_ptr<mlir::PassManager> makePassManager(mlir::MLIRContext &context,
                                                   CompilerPosition &position) {
  auto pm = std::make_unique<mlir::PassManager>(
      &context, mlir::ModuleOp::getOperationName());
  pm->addInstrumentation(std::make_unique<TrackPosition>(position));
  pm->enableVerifier(false);
  return pm;
}

/// Runs `pm` on `module` and verifies the result; `what` names the
/// pipeline in the failure summary.
bool runAndVerify(mlir::PassManager &pm, mlir::ModuleOp module,
                  const std::string &what, CompileOutcome &outcome) {
  if (mlir::failed(pm.run(module))) {
    outcome.failureSummary = what + " failed";
    return false;
  }
  if (mlir::failed(mlir::verify(module))) {
    outcome.failureSummary = "module failed to verify after " + what;
    return false;
  }
  return true;
}

/// Adds the execution plan to `outcome`; false (with the summary set) when
/// the module is not an exported program.
bool addPlan(mlir::ModuleOp module, CompileOutcome &outcome,
             bool withProgramTexts = true) {
  mlir::FailureOr<std::string> plan =
      mlir::mpmd::buildExecutionPlan(module, withProgramTexts);
  if (mlir::failed(plan)) {
    outcome.failureSummary = "could not build the execution plan";
    return false;
  }
  outcome.plan = std::move(*plan);
  return true;
}

/// Parses `text`, runs the textual `pipeline` (if any) and prints the
/// result (with the plan when asked for).
CompileOutcome compile(const std::string &text, const std::string *pipeline,
                       bool generic, const std::string &sourceName,
                       bool withPlan = false) {
  return runGuarded(text, [&](CompileOutcome &outcome,
                              CompilerPosition &position,
                              std::string &ranPipeline) {
    // A crash longjmps past this frame: the session is never destroyed,
    // and its context never goes back to the pool.
    CompilerSession session(outcome.diagnostics);
    session.noteParsed(text.size());
    mlir::OwningOpRef<mlir::ModuleOp> module =
        parseModule(session.getContext(), text, sourceName);
    if (!module) {
      outcome.failureSummary = "failed to parse or verify the module";
      return;
    }
    if (pipeline) {
      ranPipeline = *pipeline;
      std::unique_ptr<mlir::PassManager> pm =
          makePassManager(session.getContext(), position);
      CollectedDiagnostic pipelineError;
      if (mlir::failed(buildPipeline(*pipeline, *pm, pipelineError))) {
        outcome.failureSummary = "invalid pass pipeline '" + *pipeline + "'";
        outcome.diagnostics.push_back(std::move(pipelineError));
        return;
      }
      if (!runAndVerify(*pm, *module, "pass pipeline '" + *pipeline + "'",
                        outcome))
        return;
    }
    if (withPlan && !addPlan(*module, outcome))
      return;
    outcome.text = printModule(*module, generic);
  });
}

nb::object toPython(const CollectedDiagnostic &diag) {
  nb::list notes;
  for (const CollectedDiagnostic &note : diag.notes)
    notes.append(toPython(note));
  return nb::make_tuple(diag.severity, diag.location, diag.message, notes);
}

/// Python classes the module reports with.
struct PythonCategories {
  nb::object error;   // _mpmd_compiler.DiagnosticError
  nb::object warning; // mpmd.errors.CompilerWarning
};

/// Returns the printed module or raises DiagnosticError; warnings of a
/// successful run become Python warnings. The C++ part runs without the GIL
/// so other Python threads (and JAX) keep going.
CompileOutcome raiseOnFailure(const PythonCategories &categories,
                              CompileOutcome outcome) {
  if (outcome.text) {
    for (const CollectedDiagnostic &diag : outcome.diagnostics) {
      if (diag.severity != "warning")
        continue;
      std::string warning = diag.location.empty()
                                ? diag.message
                                : diag.location + ": " + diag.message;
      if (PyErr_WarnEx(categories.warning.ptr(), warning.c_str(), 1) != 0)
        throw nb::python_error();
    }
    return outcome;
  }
  nb::list diagnostics;
  for (const CollectedDiagnostic &diag : outcome.diagnostics)
    diagnostics.append(toPython(diag));
  PyErr_SetObject(categories.error.ptr(),
                  nb::make_tuple(outcome.failureSummary, diagnostics).ptr());
  throw nb::python_error();
}

CompileOutcome compileOrRaise(const PythonCategories &categories,
                              const std::string &text,
                              const std::string *pipeline, bool generic,
                              const std::string &sourceName,
                              bool withPlan = false) {
  CompileOutcome outcome;
  {
    nb::gil_scoped_release release;
    outcome = compile(text, pipeline, generic, sourceName, withPlan);
  }
  return raiseOnFailure(categories, std::move(outcome));
}


/// A Python exception raised by a client's schedule or merge predicate
/// inside a compile; re-raised once the compile is over.
struct PendingPythonError {
  std::unique_ptr<nb::python_error> error;
};

nb::list fragmentsToPython(llvm::ArrayRef<mlir::mpmd::FragmentInfo> infos) {
  nb::list list;
  for (const mlir::mpmd::FragmentInfo &info : infos) {
    nb::list origins;
    for (const mlir::mpmd::Origin &origin : info.origins)
      origins.append(nb::make_tuple(origin.name, origin.transposeCount));
    nb::dict entry;
    entry["origins"] = nb::tuple(origins);
    entry["stage"] = info.stage ? nb::cast(*info.stage) : nb::none();
    entry["call_counter"] =
        info.callCounter ? nb::cast(*info.callCounter) : nb::none();
    entry["mesh"] = info.mesh;
    entry["kind"] = info.kind;
    entry["label"] = info.label();
    entry["key"] = info.key();
    entry["loop"] = info.loop.empty() ? nb::none() : nb::cast(info.loop);
    entry["loop_schedule"] = info.loopSchedule.empty()
                                 ? nb::none()
                                 : nb::cast(info.loopSchedule);
    list.append(entry);
  }
  return list;
}

/// Calls a client function over the fragments, with the GIL, and converts
/// its result; a Python exception is kept in `pending`.
template <typename T>
std::optional<T> callClient(const nb::callable &function,
                            llvm::ArrayRef<mlir::mpmd::FragmentInfo> infos,
                            PendingPythonError &pending, std::string &error,
                            llvm::function_ref<T(nb::handle)> convert) {
  nb::gil_scoped_acquire acquire;
  try {
    return convert(function(fragmentsToPython(infos)));
  } catch (nb::python_error &raised) {
    pending.error = std::make_unique<nb::python_error>(std::move(raised));
    error = "it raised a Python exception";
  } catch (const std::exception &mismatch) {
    error = std::string("it returned an unexpected value (") +
            mismatch.what() + ")";
  }
  return std::nullopt;
}

/// Every value of a TableGen enum with its spelling.
template <typename E, unsigned (*MaxValue)(), llvm::StringRef (*Stringify)(E)>
std::vector<std::pair<std::string, E>> enumSpellings() {
  std::vector<std::pair<std::string, E>> values;
  for (unsigned value = 0; value <= MaxValue(); ++value)
    values.emplace_back(Stringify(static_cast<E>(value)).str(),
                        static_cast<E>(value));
  return values;
}

using AssignmentEntries =
    std::vector<std::tuple<std::string, std::string, std::optional<int64_t>>>;
using IndexedEntries = std::vector<std::tuple<int64_t, std::string, std::string>>;

std::vector<mlir::mpmd::IndexedAssignment>
toIndexed(const IndexedEntries &entries) {
  std::vector<mlir::mpmd::IndexedAssignment> result;
  for (auto &[index, mesh, memoryKind] : entries)
    result.push_back({index, mesh, memoryKind});
  return result;
}

/// The partition pipeline's options from textual `NAME=VALUE` entries (the
/// simple options mpmd/options.py declares once and turns into text), parsed
/// as `mpmd-opt --mpmd-partition="..."` parses them, so that a new option
/// needs no code here. The options given as arguments of their own (typed
/// values, callbacks) may not come as text too: the arguments would win
/// silently. Raises ValueError naming what is wrong.
mlir::mpmd::PartitionOptions
parsePartitionOptions(const std::vector<std::string> &entries) {
  static constexpr llvm::StringLiteral kExplicit[] = {
      "assignment", "input-assignment", "output-assignment",   "schedule",
      "order",      "merge-rules",      "offload-activations", "offload-names"};
  for (const std::string &entry : entries) {
    llvm::StringRef name = llvm::StringRef(entry).split('=').first.trim();
    if (llvm::is_contained(kExplicit, name))
      throw nb::value_error(("partition option '" + name +
                             "' is an argument of its own; it may not be "
                             "given among the textual options")
                                .str()
                                .c_str());
  }
  std::string joined = llvm::join(entries, " ");
  mlir::mpmd::PartitionPipelineOptions textual;
  std::string report, optionError;
  llvm::raw_string_ostream os(report);
  mlir::mpmd::optionErrorSink = &optionError;
  mlir::LogicalResult parsed = textual.parseFromString(joined, os);
  mlir::mpmd::optionErrorSink = nullptr;
  if (mlir::failed(parsed)) {
    std::string reason = llvm::StringRef(report).trim().str();
    if (!optionError.empty())
      reason += (reason.empty() ? "" : "; ") + optionError;
    throw nb::value_error(("invalid partition options '" + joined + "'" +
                           (reason.empty() ? "" : ": " + reason))
                              .c_str());
  }
  return textual.typed();
}

/// A program JAX lowered, parsed once and partitioned once by a typed
/// request: import, optimize, sharding and export run as one pipeline on
/// the parsed module, and schedules or merge predicates the client holds
/// are called back with the fragments in between. No text crosses the
/// boundary but the input and the result.
class Partitioner {
public:
  Partitioner(PythonCategories categories, std::string text,
              std::string sourceName)
      : categories(std::move(categories)), text(std::move(text)) {
    CompileOutcome outcome;
    {
      nb::gil_scoped_release release;
      outcome = runGuarded(this->text, [&](CompileOutcome &out,
                                           CompilerPosition &,
                                           std::string &) {
        session = std::make_unique<CompilerSession>(sink);
        session->noteParsed(this->text.size());
        module = parseModule(session->getContext(), this->text, sourceName);
        out.diagnostics = std::move(sink);
        sink.clear();
        if (!module) {
          out.failureSummary = "failed to parse or verify the module";
          return;
        }
        module->walk([&](mlir::Operation *op) {
          if (auto named = llvm::dyn_cast<mlir::mpmd::NamedComputationOp>(op))
            computations.push_back(named.getName().str());
          else if (auto tensor = llvm::dyn_cast<mlir::mpmd::NamedTensorOp>(op))
            tensors.push_back(tensor.getName().str());
        });
        for (std::vector<std::string> *names : {&computations, &tensors}) {
          llvm::sort(*names);
          names->erase(std::unique(names->begin(), names->end()),
                       names->end());
        }
        out.text = "";
      });
      if (!outcome.text)
        endSession(outcome.crashed);
    }
    raiseOnFailure(this->categories, std::move(outcome));
  }

  /// The names of the named computations and named tensors, sorted.
  std::pair<std::vector<std::string>, std::vector<std::string>>
  namedOps() const {
    return {computations, tensors};
  }

  /// The automatic stage assignment (mpmd-auto-assign's): a dict with the
  /// per-name costs, the microbatch count, and for the balanced split and
  /// the split by count, the stage of each name and each stage's FLOPs and
  /// memory; or with "error" (and "culprit", a name) when no split fits.
  nb::dict autoAssign(unsigned stages,
                      const std::vector<std::pair<std::string, unsigned>>
                          &fixedEntries,
                      int64_t memoryLimit, bool gpipe) {
    if (!module || partitionRan)
      throw nb::value_error("this Partitioner has already partitioned its "
                            "module (or failed to); make a new one");
    mlir::mpmd::CostTable table =
        mlir::mpmd::measureNamedComputations(*module);
    std::map<std::string, unsigned> fixedStage(fixedEntries.begin(),
                                               fixedEntries.end());
    llvm::SmallVector<std::optional<unsigned>> fixed;
    for (const auto &cost : table.names) {
      auto found = fixedStage.find(cost.name);
      fixed.push_back(found == fixedStage.end()
                          ? std::nullopt
                          : std::optional<unsigned>(found->second));
    }
    llvm::SmallVector<int64_t> inflight =
        mlir::mpmd::inflightMicrobatches(stages, table.microbatches, gpipe);
    nb::dict result;
    nb::list costs;
    for (const auto &cost : table.names) {
      nb::dict entry;
      entry["name"] = cost.name;
      entry["forward_flops"] = cost.forwardFlops;
      entry["backward_flops"] = cost.backwardFlops;
      entry["parameter_bytes"] = cost.parameterBytes;
      entry["activation_bytes"] = cost.activationBytes;
      entry["output_bytes"] = cost.outputBytes;
      costs.append(entry);
    }
    result["costs"] = costs;
    result["microbatches"] = table.microbatches;
    result["inflight"] = std::vector<int64_t>(inflight.begin(), inflight.end());
    auto describe = [&](const mlir::mpmd::StageSplit &split) {
      nb::dict out;
      out["stage_of"] =
          std::vector<unsigned>(split.stageOf.begin(), split.stageOf.end());
      out["flops"] = std::vector<double>(split.flops.begin(), split.flops.end());
      out["memory"] =
          std::vector<int64_t>(split.memory.begin(), split.memory.end());
      return out;
    };
    if (stages > 0 && table.names.size() >= stages)
      result["by_count"] = describe(
          mlir::mpmd::splitByCount(table.names, stages, inflight));
    std::string error;
    std::optional<unsigned> culprit;
    mlir::FailureOr<mlir::mpmd::StageSplit> split =
        mlir::mpmd::splitIntoStages(
            table.names, stages, fixed, inflight,
            memoryLimit > 0 ? std::optional<int64_t>(memoryLimit)
                            : std::nullopt,
            error, culprit);
    if (mlir::failed(split)) {
      result["error"] = error;
      if (culprit)
        result["culprit"] = table.names[*culprit].name;
      return result;
    }
    result["auto"] = describe(*split);
    return result;
  }

  nb::tuple partition(const AssignmentEntries &assignment,
                      const IndexedEntries &inputAssignment,
                      const IndexedEntries &outputAssignment,
                      mlir::mpmd::ScheduleKind schedule,
                      std::optional<nb::callable> order,
                      const std::vector<std::pair<std::string, std::string>>
                          &mergeRules,
                      std::optional<nb::callable> mergePredicate,
                      bool offloadActivations,
                      const std::vector<std::string> &offloadNames,
                      const std::vector<std::string> &options,
                      bool printText, bool printPrograms) {
    if (!module || partitionRan)
      throw nb::value_error("this Partitioner has already partitioned its "
                            "module (or failed to); make a new one");
    partitionRan = true;
    // The simple options (switches) from their text, then the values that
    // come as arguments of their own.
    mlir::mpmd::PartitionOptions partitionOptions =
        parsePartitionOptions(options);
    mlir::mpmd::ImportOptions &importOptions = partitionOptions.importOptions;
    for (auto &[name, mesh, stage] : assignment)
      importOptions.assignment.push_back({name, mesh, stage});
    importOptions.inputAssignment = toIndexed(inputAssignment);
    importOptions.outputAssignment = toIndexed(outputAssignment);

    PendingPythonError pending;
    mlir::mpmd::OptimizeOptions &optimizeOptions =
        partitionOptions.optimizeOptions;
    optimizeOptions.schedule = schedule;
    for (auto &[first, second] : mergeRules)
      optimizeOptions.mergeRules.push_back({first, second});
    optimizeOptions.offloadActivations = offloadActivations;
    optimizeOptions.offloadNames = offloadNames;
    // The providers refer to the callables on this frame: copies of them
    // (passes copy their options) must not touch Python objects without
    // the GIL.
    if (order) {
      const nb::callable &function = *order;
      optimizeOptions.orderProvider =
          [&function, &pending](llvm::ArrayRef<mlir::mpmd::FragmentInfo> infos,
                                std::string &error) {
            return callClient<std::vector<mlir::mpmd::MeshOrder>>(
                function, infos, pending, error, [](nb::handle result) {
                  std::vector<mlir::mpmd::MeshOrder> orders;
                  // Keys: a mesh (the function's schedule), or a
                  // (mesh, loop) pair (that loop's own).
                  for (auto [target, keys] : nb::cast<nb::dict>(result)) {
                    mlir::mpmd::MeshOrder entry;
                    if (nb::isinstance<nb::tuple>(target)) {
                      entry.mesh = nb::cast<std::string>(target[0]);
                      entry.loop = nb::cast<std::string>(target[1]);
                    } else {
                      entry.mesh = nb::cast<std::string>(target);
                    }
                    for (nb::handle key : keys)
                      entry.keys.push_back(nb::cast<std::string>(key));
                    orders.push_back(std::move(entry));
                  }
                  return orders;
                });
          };
    }
    if (mergePredicate) {
      const nb::callable &function = *mergePredicate;
      optimizeOptions.mergeRuleProvider =
          [&function, &pending](llvm::ArrayRef<mlir::mpmd::FragmentInfo> infos,
                                std::string &error) {
            return callClient<std::vector<mlir::mpmd::MergeRule>>(
                function, infos, pending, error, [](nb::handle result) {
                  std::vector<mlir::mpmd::MergeRule> rules;
                  for (nb::handle pair : result)
                    rules.push_back(
                        {nb::cast<std::string>(pair[nb::int_(0)]),
                         nb::cast<std::string>(pair[nb::int_(1)])});
                  return rules;
                });
          };
    }

    CompileOutcome outcome;
    {
      nb::gil_scoped_release release;
      outcome = runGuarded(text, [&](CompileOutcome &out,
                                     CompilerPosition &position,
                                     std::string &ranPipeline) {
        std::unique_ptr<mlir::PassManager> pm =
            makePassManager(session->getContext(), position);
        mlir::mpmd::addPartitionPipeline(*pm, partitionOptions);
        llvm::raw_string_ostream os(ranPipeline);
        pm->printAsTextualPipeline(os);
        os.flush();
        bool ok = runAndVerify(*pm, *module, "partitioning", out) &&
                  addPlan(*module, out, printPrograms);
        out.diagnostics = std::move(sink);
        sink.clear();
        if (ok)
          out.text = printText ? printModule(*module, /*generic=*/false)
                               : std::string();
      });
      // The module stays for module_text() and program_texts() when they
      // were not printed.
      bool ok = outcome.text.has_value();
      textDeferred = ok && !printText;
      programsDeferred = ok && !printPrograms;
      if (!textDeferred && !programsDeferred)
        endSession(outcome.crashed);
    }
    if (pending.error)
      throw nb::python_error(std::move(*pending.error));
    outcome = raiseOnFailure(categories, std::move(outcome));
    if (!printText)
      return nb::make_tuple(nb::none(), outcome.plan);
    return nb::make_tuple(*outcome.text, outcome.plan);
  }

  /// The partitioned module, printed (once) after a partition that did
  /// not print it; the module is freed when nothing more is to be printed.
  std::string moduleText() {
    if (!printedText) {
      if (!textDeferred)
        throw nb::value_error("module_text() follows a partition(..., "
                              "print_module=False) of this Partitioner");
      printedText = *printDeferred([&](CompileOutcome &out) {
                       out.text = printModule(*module, /*generic=*/false);
                     }).text;
      releaseIfPrinted();
    }
    return *printedText;
  }

  /// The texts of the plan's programs as (name, text) pairs, printed
  /// (once) after a partition whose plan left them out
  /// (print_programs=False); equal programs share one text.
  std::vector<std::pair<std::string, std::string>> programTexts() {
    if (!programs) {
      if (!programsDeferred)
        throw nb::value_error("program_texts() follows a partition(..., "
                              "print_programs=False) of this Partitioner");
      std::vector<std::pair<std::string, std::string>> texts;
      printDeferred([&](CompileOutcome &out) {
        auto built = mlir::mpmd::buildProgramTexts(*module);
        if (mlir::failed(built)) {
          out.failureSummary = "could not print the plan's programs";
          return;
        }
        texts = std::move(*built);
        out.text = "";
      });
      programs = std::move(texts);
      releaseIfPrinted();
    }
    return *programs;
  }

private:
  /// Runs `print` on the kept module and raises what it reports; a crash
  /// abandons the module.
  CompileOutcome
  printDeferred(llvm::function_ref<void(CompileOutcome &)> print) {
    if (!module)
      throw nb::value_error("the partitioned module is gone: printing it "
                            "crashed before");
    CompileOutcome outcome;
    {
      nb::gil_scoped_release release;
      outcome = runGuarded(text, [&](CompileOutcome &out, CompilerPosition &,
                                     std::string &) {
        print(out);
        out.diagnostics = std::move(sink);
        sink.clear();
      });
      if (outcome.crashed)
        endSession(/*crashed=*/true);
    }
    return raiseOnFailure(categories, std::move(outcome));
  }

  /// Frees the module once all that partition() left to print is printed.
  void releaseIfPrinted() {
    if ((!textDeferred || printedText) && (!programsDeferred || programs))
      endSession(/*crashed=*/false);
  }

  /// Frees the module, then its session (whose context is pooled unless
  /// the run crashed).
  void endSession(bool crashed) {
    if (crashed && session) {
      // Neither is touched again: a crash may have left them corrupt.
      session->abandon();
      (void)module.release();
    }
    module = nullptr;
    session.reset();
  }

  PythonCategories categories;
  std::string text;
  std::vector<CollectedDiagnostic> sink;
  // Destroyed in reverse: the module before its context.
  std::unique_ptr<CompilerSession> session;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  bool partitionRan = false;
  // After partition(..., print_module=False / print_programs=False): the
  // module is kept, and printed on the first module_text() /
  // program_texts().
  bool textDeferred = false;
  bool programsDeferred = false;
  std::optional<std::string> printedText;
  std::optional<std::vector<std::pair<std::string, std::string>>> programs;
  std::vector<std::string> computations;
  std::vector<std::string> tensors;
};

} // namespace

NB_MODULE(_mpmd_compiler, m) {
  m.doc() = "The mpmd MLIR compiler: parse, verify and run pass pipelines.";
  mlir::mpmd::registerAllPasses();
  // Signals and fatal errors inside a compile are caught by the
  // CrashRecoveryContext of `compile`; outside one, LLVM's handler restores
  // the previous handlers and re-raises.
  llvm::CrashRecoveryContext::Enable();
  llvm::install_fatal_error_handler(recordFatalError, nullptr);

  PythonCategories categories;
  categories.error = nb::steal(PyErr_NewExceptionWithDoc(
      "mpmd._mpmd_compiler.DiagnosticError",
      "Compilation failed; args are (summary, [(severity, location, message, "
      "notes), ...]).",
      PyExc_RuntimeError, nullptr));
  if (!categories.error.is_valid())
    throw nb::python_error();
  categories.warning =
      nb::module_::import_("mpmd.errors").attr("CompilerWarning");
  m.attr("DiagnosticError") = categories.error;

  m.def(
      "parse_and_verify",
      [categories](const std::string &text, bool generic,
                   const std::string &sourceName) {
        return *compileOrRaise(categories, text, /*pipeline=*/nullptr,
                               generic, sourceName)
                    .text;
      },
      nb::arg("text"), nb::arg("generic") = false,
      nb::arg("source_name") = "<input>",
      "Parses and verifies `text`; returns the printed module.");

  m.def(
      "run_pass_pipeline",
      [categories](const std::string &text, const std::string &pipeline,
                   bool generic, const std::string &sourceName) {
        return *compileOrRaise(categories, text, &pipeline, generic,
                               sourceName)
                    .text;
      },
      nb::arg("text"), nb::arg("pipeline"), nb::arg("generic") = false,
      nb::arg("source_name") = "<input>",
      "Parses, verifies, runs `pipeline` (e.g. 'builtin.module(canonicalize)' "
      "or a registered pipeline name), verifies and returns the printed "
      "module.");

  m.def(
      "compile_to_plan",
      [categories](const std::string &text, const std::string &pipeline,
                   const std::string &sourceName) {
        CompileOutcome outcome = compileOrRaise(
            categories, text, &pipeline, /*generic=*/false, sourceName,
            /*withPlan=*/true);
        return nb::make_tuple(*outcome.text, outcome.plan);
      },
      nb::arg("text"), nb::arg("pipeline"),
      nb::arg("source_name") = "<input>",
      "Runs `pipeline` (which must end with an exported program, e.g. "
      "'mpmd-import{...},mpmd-export') and returns (printed module, "
      "execution plan as JSON text).");

  m.def(
      "op_catalog",
      [] {
        nb::list entries;
        for (const mlir::stablehlo::OpInfo &info :
             mlir::stablehlo::getAllOpInfos()) {
          nb::dict entry;
          entry["name"] = std::string(info.name);
          entry["pure"] = info.isPure;
          entry["elementwise"] = info.isElementwise;
          entry["constant_like"] = info.isConstantLike;
          entry["cheap_to_clone"] = info.isCheapToClone;
          entry["commutative"] = info.isCommutative;
          entry["collective"] = info.isCollective;
          entry["has_regions"] = info.hasRegions;
          entries.append(entry);
        }
        return entries;
      },
      "The op catalog: what the passes know about each StableHLO and CHLO "
      "op name (a list of dicts, sorted by name).");

  nb::enum_<mlir::mpmd::ScheduleKind>(m, "ScheduleKind",
                                      "A pipeline schedule the compiler "
                                      "applies (TableGen: MpmdAttrs.td).")
      .value("NONE", mlir::mpmd::ScheduleKind::kNone)
      .value("GPIPE", mlir::mpmd::ScheduleKind::kGPipe)
      .value("ONE_F_ONE_B", mlir::mpmd::ScheduleKind::k1F1B)
      .value("INTERLEAVED_1F1B", mlir::mpmd::ScheduleKind::kInterleaved1F1B)
      .value("ZERO_BUBBLE_H1", mlir::mpmd::ScheduleKind::kZeroBubbleH1)
      .value("EXPLICIT", mlir::mpmd::ScheduleKind::kExplicit);
  nb::enum_<mlir::mpmd::FragmentKind>(m, "FragmentKind",
                                      "What a user fragment computes "
                                      "(TableGen: MpmdAttrs.td).")
      .value("FORWARD", mlir::mpmd::FragmentKind::kForward)
      .value("BACKWARD", mlir::mpmd::FragmentKind::kBackward)
      .value("MIXED", mlir::mpmd::FragmentKind::kMixed)
      .value("WEIGHT_GRADIENT", mlir::mpmd::FragmentKind::kWeightGradient);
  m.def(
      "_context_pool",
      [](size_t maxIdle, size_t budgetBytes) {
        auto [oldIdle, oldBudget] =
            ContextPool::setLimits(maxIdle, budgetBytes);
        ContextPool::Stats stats = ContextPool::stats();
        nb::dict result;
        result["created"] = stats.created;
        result["idle"] = stats.idle;
        result["over_budget"] = stats.overBudget;
        result["max_idle"] = oldIdle;
        result["budget_bytes"] = oldBudget;
        return result;
      },
      nb::arg("max_idle") = 0, nb::arg("budget_bytes") = 0,
      "The pool of MLIR contexts compiler calls run in: counts (created, "
      "idle, over_budget) and the limits before this call (max_idle, "
      "budget_bytes); nonzero arguments set new limits.");
  // The spellings (pass options, plans, messages) come from TableGen.
  m.def("schedule_kinds",
        &enumSpellings<mlir::mpmd::ScheduleKind,
                       mlir::mpmd::getMaxEnumValForScheduleKind,
                       mlir::mpmd::stringifyScheduleKind>,
        "[(spelling, ScheduleKind)] for every schedule kind.");
  m.def("fragment_kinds",
        &enumSpellings<mlir::mpmd::FragmentKind,
                       mlir::mpmd::getMaxEnumValForFragmentKind,
                       mlir::mpmd::stringifyFragmentKind>,
        "[(spelling, FragmentKind)] for every fragment kind.");

  nb::class_<Partitioner>(
      m, "Partitioner",
      "A module JAX lowered, parsed once; `partition` runs import, "
      "optimize, sharding and export on it with typed options.")
      .def(
          "__init__",
          [categories](Partitioner *self, std::string text,
                       std::string sourceName) {
            new (self) Partitioner(categories, std::move(text),
                                   std::move(sourceName));
          },
          nb::arg("text"), nb::arg("source_name") = "<input>")
      .def("named_ops", &Partitioner::namedOps,
           "(named computation names, named tensor names), each sorted.")
      .def("auto_assign", &Partitioner::autoAssign, nb::kw_only(),
           nb::arg("stages"), nb::arg("fixed"), nb::arg("memory_limit") = 0,
           nb::arg("gpipe") = false,
           "Costs of the named computations and their balanced split into "
           "`stages` contiguous stages (see mpmd-auto-assign); `fixed` is "
           "[(name, stage)] of hand-placed names; `memory_limit` bytes per "
           "stage. A dict: costs, microbatches, inflight, auto and by_count "
           "({stage_of, flops, memory}), or error (and culprit) when no "
           "split fits.")
      .def("partition", &Partitioner::partition, nb::kw_only(),
           nb::arg("assignment"), nb::arg("input_assignment"),
           nb::arg("output_assignment"),
           nb::arg("schedule") = mlir::mpmd::ScheduleKind::kNone,
           nb::arg("order").none() = nb::none(),
           nb::arg("merge_rules") =
               std::vector<std::pair<std::string, std::string>>(),
           nb::arg("merge_predicate").none() = nb::none(),
           nb::arg("offload_activations") = false,
           nb::arg("offload_names") = std::vector<std::string>(),
           nb::arg("options") = std::vector<std::string>(),
           nb::arg("print_module") = true, nb::arg("print_programs") = true,
           "Partitions the module (once) with the mpmd-partition pipeline. "
           "`assignment` is [(name, mesh, stage or None)], the io "
           "assignments [(index, mesh, memory kind or '')]. "
           "`order(fragments) -> {mesh: [key, ...]}` gives an explicit "
           "schedule's order, `merge_predicate(fragments) -> [(label, "
           "label)]` more merge rules; `offload_activations` keeps forward "
           "residuals in pinned host memory until their backward (of the "
           "named computations `offload_names`, all when empty); fragments "
           "are dicts (origins as (name, transpose count) pairs, stage, "
           "call_counter, mesh, kind, label, key). `options` are the other "
           "options of mpmd-partition as 'NAME=VALUE' text "
           "(['infer-transfers=true', 'remat=false', ...]); a malformed one "
           "is a ValueError. Returns (printed MPMD module, execution plan "
           "as JSON text); with print_module=False (None, plan), and "
           "module_text() prints the module when asked; with "
           "print_programs=False the plan's programs carry no \"module\" "
           "text, and program_texts() prints them when asked.")
      .def("module_text", &Partitioner::moduleText,
           "The partitioned module, printed on the first call after "
           "partition(..., print_module=False).")
      .def("program_texts", &Partitioner::programTexts,
           "[(program, text)] of the plan's programs, printed on the first "
           "call after partition(..., print_programs=False).");
}
