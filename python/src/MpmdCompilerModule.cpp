//===- MpmdCompilerModule.cpp - nanobind module mpmd._mpmd_compiler -------===//
//
// A thin Python face of the mpmd compiler: parse, verify and transform MLIR
// text. Every call builds a fresh MLIRContext, runs without the GIL, and
// collects diagnostics instead of printing them; a failure raises
// `_mpmd_compiler.DiagnosticError(summary, diagnostics)`, where each diagnostic
// is a `(severity, location, message, notes)` tuple and `notes` is a list of
// such tuples (with empty notes).
//
//===----------------------------------------------------------------------===//

#include "mpmd/Dialect/StableHlo/IR/OpCatalog.h"
#include "mpmd/InitAll.h"
#include "mpmd/Transforms/Common/FragmentUtils.h"
#include "mpmd/Transforms/Common/ModuleUtils.h"
#include "mpmd/Transforms/Export/Passes.h"

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
#include <nanobind/stl/string.h>

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

/// A context with every mpmd dialect, unknown dialects kept opaque, and a
/// handler that records diagnostics into `sink`.
class CompilerSession {
public:
  explicit CompilerSession(std::vector<CollectedDiagnostic> &sink)
      : context(makeRegistry(), mlir::MLIRContext::Threading::DISABLED),
        handler(&context, [&sink](mlir::Diagnostic &diag) {
          sink.push_back(collect(diag));
          return mlir::success();
        }) {
    context.allowUnregisteredDialects(true);
    // The location says where; a dump of the op would flood the message.
    context.printOpOnDiagnostic(false);
  }

  mlir::MLIRContext &getContext() { return context; }

private:
  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    mlir::mpmd::registerAllDialects(registry);
    return registry;
  }

  mlir::MLIRContext context;
  mlir::ScopedDiagnosticHandler handler;
};

mlir::OwningOpRef<mlir::ModuleOp> parseModule(mlir::MLIRContext &context,
                                              llvm::StringRef text,
                                              llvm::StringRef sourceName) {
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
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os, flags);
  return printed;
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
  std::string report;
  llvm::raw_string_ostream os(report);
  if (mlir::succeeded(mlir::parsePassPipeline(elements, pm, os)))
    return mlir::success();
  error = pipelineDiagnostic(report, elements.data() - pipeline.data());
  return mlir::failure();
}

/// The user fragments of the entry functions, as schedules see them.
mlir::FailureOr<std::string> describeFragments(mlir::ModuleOp module) {
  mlir::FailureOr<llvm::SmallVector<mlir::func::FuncOp>> entries =
      mlir::mpmd::getEntryFunctions(module);
  if (mlir::failed(entries))
    return mlir::failure();
  llvm::json::Array fragments;
  for (mlir::func::FuncOp func : *entries)
    for (auto fragment : func.getBody().getOps<mlir::mpmd::FragmentOp>()) {
      if (!fragment.isUserFragment())
        continue;
      mlir::mpmd::FragmentInfo info = mlir::mpmd::getFragmentInfo(fragment);
      llvm::json::Array origins;
      for (const std::string &origin : info.origins)
        origins.push_back(origin);
      llvm::json::Object object{{"origins", std::move(origins)},
                                {"mesh", info.mesh},
                                {"kind", info.kind},
                                {"label", info.label()},
                                {"key", info.key()}};
      if (info.stage)
        object["stage"] = *info.stage;
      if (info.callCounter)
        object["call_counter"] = *info.callCounter;
      fragments.push_back(std::move(object));
    }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(fragments));
  return text;
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

void compileUnsafe(CompileOutcome &outcome, CompilerPosition &position,
                   const std::string &text, const std::string *pipeline,
                   bool generic, const std::string &sourceName,
                   bool withPlan, bool withFragments);

/// Runs the compiler on `text`. A crash inside it (a signal, or an LLVM
/// fatal error) does not take the Python process down: it becomes a failure
/// naming the pass and op, with a reproducer written for `mpmd-opt`.
CompileOutcome compile(const std::string &text, const std::string *pipeline,
                       bool generic, const std::string &sourceName,
                       bool withPlan = false, bool withFragments = false) {
  CompileOutcome outcome;
  CompilerPosition position;
  fatalErrorReason.clear();
  llvm::CrashRecoveryContext recovery;
  if (recovery.RunSafely([&] {
        compileUnsafe(outcome, position, text, pipeline, generic, sourceName,
                      withPlan, withFragments);
      }))
    return outcome;
  // What the crashed run built is abandoned: its context may be corrupt.
  CompileOutcome crashed;
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

void compileUnsafe(CompileOutcome &outcome, CompilerPosition &position,
                   const std::string &text, const std::string *pipeline,
                   bool generic, const std::string &sourceName,
                   bool withPlan, bool withFragments) {
  CompilerSession session(outcome.diagnostics);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parseModule(session.getContext(), text, sourceName);
  if (!module) {
    outcome.failureSummary = "failed to parse or verify the module";
    return;
  }
  if (pipeline) {
    mlir::PassManager pm(&session.getContext(),
                         mlir::ModuleOp::getOperationName());
    pm.addInstrumentation(std::make_unique<TrackPosition>(position));
    // Verified once after the whole pipeline (below) rather than after each
    // pass: on unrolled programs that halves the compiler's time. mpmd-opt
    // (and the lit tests) still verify after each pass.
    pm.enableVerifier(false);
    CollectedDiagnostic pipelineError;
    if (mlir::failed(buildPipeline(*pipeline, pm, pipelineError))) {
      outcome.failureSummary = "invalid pass pipeline '" + *pipeline + "'";
      outcome.diagnostics.push_back(std::move(pipelineError));
      return;
    }
    if (mlir::failed(pm.run(*module))) {
      outcome.failureSummary = "pass pipeline '" + *pipeline + "' failed";
      return;
    }
    if (mlir::failed(mlir::verify(*module))) {
      outcome.failureSummary =
          "module failed to verify after pass pipeline '" + *pipeline + "'";
      return;
    }
  }
  if (withPlan) {
    mlir::FailureOr<std::string> plan = mlir::mpmd::buildExecutionPlan(*module);
    if (mlir::failed(plan)) {
      outcome.failureSummary = "could not build the execution plan";
      return;
    }
    outcome.plan = std::move(*plan);
  }
  if (withFragments) {
    mlir::FailureOr<std::string> infos = describeFragments(*module);
    if (mlir::failed(infos)) {
      outcome.failureSummary = "could not list the fragments";
      return;
    }
    outcome.plan = std::move(*infos);
  }
  outcome.text = printModule(*module, generic);
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
CompileOutcome compileOrRaise(const PythonCategories &categories,
                              const std::string &text,
                              const std::string *pipeline, bool generic,
                              const std::string &sourceName,
                              bool withPlan = false,
                              bool withFragments = false) {
  CompileOutcome outcome;
  {
    nb::gil_scoped_release release;
    outcome = compile(text, pipeline, generic, sourceName, withPlan,
                      withFragments);
  }
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

  m.def(
      "run_and_list_fragments",
      [categories](const std::string &text, const std::string &pipeline,
                   const std::string &sourceName) {
        CompileOutcome outcome = compileOrRaise(
            categories, text, &pipeline, /*generic=*/false, sourceName,
            /*withPlan=*/false, /*withFragments=*/true);
        return nb::make_tuple(*outcome.text, outcome.plan);
      },
      nb::arg("text"), nb::arg("pipeline"),
      nb::arg("source_name") = "<input>",
      "Runs `pipeline` (e.g. the import pipeline) and returns (printed "
      "module, JSON list of its user fragments: origins, stage, "
      "call_counter, mesh, kind, label, key).");
}
