//===- MpmdFuzz.cpp - In-process mutation fuzzer for the mpmd compiler ----===//
//
// Feeds mutated lit inputs through parse, verify, the mpmd pass pipelines
// (import, optimize, sharding, export, or the pipeline of a seed's RUN line)
// and the execution plan, in-process.
//
// Input N of a run is a pure function of (--seed, N): a seed module of the
// corpus (every `// -----` chunk of every test/**/*.mlir), a pipeline and a
// few text mutations. The parent process never compiles anything: it loads
// the corpus, builds one MLIRContext with every dialect loaded, and forks
// workers that each run a chunk of input indices with that (inherited,
// pristine) context. A worker publishes the index it runs in shared memory;
// when it dies (a signal, an LLVM fatal error, any exit but the normal one)
// or overruns --timeout-ms on one input, the parent records that input under
// --crash-dir, replays it alone in a fresh worker to get a stack trace, and
// continues with the next index in a new worker.
//
//===----------------------------------------------------------------------===//

#include "mpmd/InitAll.h"
#include "mpmd/Support/ParserGuards.h"
#include "mpmd/Transforms/Common/OptionParsers.h"
#include "mpmd/Transforms/Export/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct FuzzOptions {
  std::string corpus = "test";
  int64_t count = -1;   // inputs to run; -1: until --seconds
  double seconds = -1;  // wall-clock budget; -1: until --count
  uint64_t seed = 1;
  int64_t start = 0;    // first input index
  int64_t timeoutMs = 5000;
  std::string crashDir = "mpmd-fuzz-crashes";
  int jobs = 1;
  int64_t chunk = 1000;  // inputs per worker process
  int64_t memoryMb = 4096;
  bool freshContext = false;
  bool noFork = false;
  bool verbose = false;
  bool printInput = false;
  bool listSeeds = false;
  bool roundtrip = true;
  int64_t maxMutations = -1;  // -1: no cap
};

void usage() {
  llvm::errs()
      << "usage: mpmd-fuzz [--corpus DIR] (--count N | --seconds S) [--seed K]\n"
         "                 [--start I] [--timeout-ms T] [--crash-dir DIR]\n"
         "                 [--jobs J] [--chunk C] [--memory-mb M]\n"
         "                 [--fresh-context] [--no-roundtrip]\n"
         "                 [--max-mutations N]\n"
         "                 [--no-fork] [--verbose] [--print-input]\n"
         "                 [--list-seeds]\n"
         "Runs inputs I, I+1, ... of the run of seed K (each a mutated module\n"
         "of the .mlir files under DIR and a pipeline) through parse, verify,\n"
         "the pipeline and the execution plan. Exit 1 if any input crashed or\n"
         "hung; each such input is written to the crash directory.\n";
}

bool parseArgs(int argc, char **argv, FuzzOptions &o) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    std::string value;
    auto next = [&](const char *name) -> bool {
      llvm::StringRef flag(name);
      if (arg == flag) {
        if (i + 1 >= argc) {
          llvm::errs() << "mpmd-fuzz: " << flag << " needs a value\n";
          exit(2);
        }
        value = argv[++i];
        return true;
      }
      if (arg.starts_with(flag) && arg.size() > flag.size() &&
          arg[flag.size()] == '=') {
        value = arg.drop_front(flag.size() + 1).str();
        return true;
      }
      return false;
    };
    auto integer = [&](int64_t &out) {
      char *end = nullptr;
      errno = 0;
      long long v = strtoll(value.c_str(), &end, 10);
      if (errno || end == value.c_str() || *end) {
        llvm::errs() << "mpmd-fuzz: not an integer: " << value << "\n";
        exit(2);
      }
      out = v;
    };
    int64_t tmp;
    if (next("--corpus")) {
      o.corpus = value;
    } else if (next("--count")) {
      integer(o.count);
    } else if (next("--seconds")) {
      o.seconds = atof(value.c_str());
    } else if (next("--seed")) {
      integer(tmp);
      o.seed = static_cast<uint64_t>(tmp);
    } else if (next("--start")) {
      integer(o.start);
    } else if (next("--timeout-ms")) {
      integer(o.timeoutMs);
    } else if (next("--crash-dir")) {
      o.crashDir = value;
    } else if (next("--jobs")) {
      integer(tmp);
      o.jobs = static_cast<int>(std::clamp<int64_t>(tmp, 1, 32));
    } else if (next("--chunk")) {
      integer(o.chunk);
      o.chunk = std::max<int64_t>(o.chunk, 1);
    } else if (next("--memory-mb")) {
      integer(o.memoryMb);
    } else if (next("--max-mutations")) {
      integer(o.maxMutations);
    } else if (arg == "--fresh-context") {
      o.freshContext = true;
    } else if (arg == "--no-roundtrip") {
      o.roundtrip = false;
    } else if (arg == "--no-fork") {
      o.noFork = true;
    } else if (arg == "--verbose") {
      o.verbose = true;
    } else if (arg == "--print-input") {
      o.printInput = true;
    } else if (arg == "--list-seeds") {
      o.listSeeds = true;
    } else if (arg == "--help" || arg == "-h") {
      usage();
      exit(0);
    } else {
      llvm::errs() << "mpmd-fuzz: unknown argument '" << arg << "'\n";
      usage();
      return false;
    }
  }
  if (o.count < 0 && o.seconds < 0 && !o.listSeeds) {
    llvm::errs() << "mpmd-fuzz: give --count or --seconds\n";
    usage();
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Randomness: every input is a pure function of (run seed, input index).
//===----------------------------------------------------------------------===//

uint64_t splitmix(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
public:
  Rng(uint64_t seed, uint64_t index) : state(seed * 0x2545f4914f6cdd1dULL) {
    state ^= index + 0x632be59bd9b4e019ULL;
    splitmix(state);
  }
  uint64_t next() { return splitmix(state); }
  /// Uniform in [0, n); 0 when n == 0.
  size_t below(size_t n) { return n ? next() % n : 0; }
  bool chance(unsigned percent) { return below(100) < percent; }
  template <typename T>
  const T &pick(const std::vector<T> &v) {
    return v[below(v.size())];
  }

private:
  uint64_t state;
};

uint64_t fnv1a(llvm::StringRef s, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

//===----------------------------------------------------------------------===//
// Corpus
//===----------------------------------------------------------------------===//

/// One pipeline to run on a module: the elements of a pipeline on
/// builtin.module (textual, so a reproducer is an mpmd-opt command line),
/// and whether the execution plan is built after it.
struct Pipeline {
  std::string elements;
  bool plan = false;
};

struct Seed {
  std::string file;  // relative to the corpus directory
  int chunk = 0;
  std::string text;  // comments stripped
  std::vector<Pipeline> runPipelines;  // from the RUN lines that use it
  std::vector<std::string> names;   // named computations and tensors
  std::vector<std::string> meshes;  // the topology's meshes, in order
};

struct Corpus {
  std::vector<Seed> seeds;
  std::vector<size_t> validSeeds;  // seeds that parse and verify as they are
  std::vector<std::string> opNames;  // every dialect op name seen
  std::vector<std::string> strings;  // every string literal seen
  std::vector<std::string> lines;    // every IR line seen (for splicing)
};

bool isIdentChar(char c) {
  return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '$' || c == '-';
}

/// Shell-like words of a RUN line: quotes group and are removed, a
/// backslash escapes the next character.
std::vector<std::string> shellWords(llvm::StringRef line) {
  std::vector<std::string> words;
  std::string cur;
  bool have = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < line.size())
        cur += line[++i];
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      have = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      cur += line[++i];
      have = true;
    } else if (isspace(static_cast<unsigned char>(c))) {
      if (have)
        words.push_back(cur);
      cur.clear();
      have = false;
    } else if (c == '|') {
      if (have)
        words.push_back(cur);
      words.push_back("|");
      cur.clear();
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  if (have)
    words.push_back(cur);
  return words;
}

/// The pipeline of an `mpmd-opt` RUN line and the file it runs on (`%s`
/// or `%S/...`), or false when it runs none we can name.
bool pipelineOfRunLine(llvm::StringRef run, llvm::StringRef dir,
                       llvm::StringRef self, std::string &target,
                       Pipeline &pipeline) {
  std::vector<std::string> words = shellWords(run);
  auto it = std::find(words.begin(), words.end(), "mpmd-opt");
  if (it == words.end())
    return false;
  std::vector<std::string> elements;
  target.clear();
  for (++it; it != words.end() && *it != "|"; ++it) {
    llvm::StringRef w = *it;
    if (w == "%s") {
      target = self.str();
      continue;
    }
    if (w.starts_with("%S/")) {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, w.drop_front(3));
      target = path.str().str();
      continue;
    }
    if (w == "-o") {
      ++it;
      if (it == words.end())
        break;
      continue;
    }
    if (!w.starts_with("-"))
      continue;
    llvm::StringRef flag = w.ltrim('-');
    auto [name, value] = flag.split('=');
    if (name == "mpmd-print-execution-plan") {
      pipeline.plan = true;
      continue;
    }
    if (name == "pass-pipeline")
      return false;  // none of the tests uses it; not worth unwrapping
    if (!mlir::PassInfo::lookup(name) && !mlir::PassPipelineInfo::lookup(name))
      continue;  // a driver flag: -split-input-file, -verify-diagnostics, ...
    std::string element = name.str();
    if (flag.contains('='))
      element += "{" + value.str() + "}";
    elements.push_back(element);
  }
  if (target.empty() || (elements.empty() && !pipeline.plan))
    return false;
  for (size_t i = 0; i < elements.size(); ++i)
    pipeline.elements += (i ? "," : "") + elements[i];
  return true;
}

/// `"..."` literals of `text` (contents, without the quotes).
void collectStrings(llvm::StringRef text, std::set<std::string> &out) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"')
      continue;
    size_t j = i + 1;
    while (j < text.size() && text[j] != '"' && text[j] != '\n') {
      if (text[j] == '\\')
        ++j;
      ++j;
    }
    if (j < text.size() && text[j] == '"' && j - i - 1 <= 64)
      out.insert(text.substr(i + 1, j - i - 1).str());
    i = j;
  }
}

bool isDialectPrefix(llvm::StringRef s) {
  return s == "mpmd" || s == "stablehlo" || s == "sdy" || s == "func" ||
         s == "chlo" || s == "mhlo" || s == "builtin" || s == "arith";
}

/// Spans of op names (`dialect.op`, bare or quoted) in `text`.
std::vector<std::pair<size_t, size_t>> opNameSpans(llvm::StringRef text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < text.size();) {
    if (!isalpha(static_cast<unsigned char>(text[i])) ||
        (i && (isIdentChar(text[i - 1]) || text[i - 1] == '#' ||
               text[i - 1] == '!' || text[i - 1] == '%' ||
               text[i - 1] == '@'))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && isIdentChar(text[j]))
      ++j;
    llvm::StringRef word = text.slice(i, j);
    auto [dialect, op] = word.split('.');
    if (!op.empty() && isDialectPrefix(dialect) &&
        isalpha(static_cast<unsigned char>(op[0])))
      spans.push_back({i, j - i});
    i = j;
  }
  return spans;
}

/// Names after `marker` up to the closing quote (`named_computation<"x"`).
void collectQuotedAfter(llvm::StringRef text, llvm::StringRef marker,
                        std::vector<std::string> &out) {
  size_t pos = 0;
  while ((pos = text.find(marker, pos)) != llvm::StringRef::npos) {
    pos += marker.size();
    size_t end = text.find('"', pos);
    if (end == llvm::StringRef::npos)
      break;
    std::string name = text.slice(pos, end).str();
    if (!name.empty() &&
        std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(name);
  }
}

std::string stripComments(llvm::StringRef chunk) {
  std::string out;
  llvm::SmallVector<llvm::StringRef> lines;
  chunk.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::StringRef t = line.trim();
    if (t.empty() || t.starts_with("//"))
      continue;
    out += line.rtrim().str();
    out += '\n';
  }
  return out;
}

bool loadCorpus(const std::string &dir, Corpus &corpus) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
       it != end && !ec; it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) == ".mlir")
      files.push_back(it->path());
  }
  if (ec || files.empty()) {
    llvm::errs() << "mpmd-fuzz: no .mlir files under '" << dir << "'\n";
    return false;
  }
  std::sort(files.begin(), files.end());

  std::map<std::string, std::vector<Pipeline>> pipelinesOf;
  std::map<std::string, std::string> contents;
  for (const std::string &file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    if (!buffer)
      continue;
    std::string text = (*buffer)->getBuffer().str();
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(text).split(lines, '\n');
    llvm::StringRef parent = llvm::sys::path::parent_path(file);
    for (llvm::StringRef line : lines) {
      size_t run = line.find("RUN:");
      if (run == llvm::StringRef::npos || !line.trim().starts_with("//"))
        continue;
      std::string target;
      Pipeline pipeline;
      if (!pipelineOfRunLine(line.drop_front(run + 4), parent, file, target,
                             pipeline))
        continue;
      std::vector<Pipeline> &known = pipelinesOf[target];
      if (std::none_of(known.begin(), known.end(), [&](const Pipeline &p) {
            return p.elements == pipeline.elements && p.plan == pipeline.plan;
          }))
        known.push_back(pipeline);
    }
    contents[file] = std::move(text);
  }

  std::set<std::string> ops, strings, lineSet;
  for (const std::string &file : files) {
    auto found = contents.find(file);
    if (found == contents.end())
      continue;
    llvm::StringRef text = found->second;
    llvm::SmallVector<llvm::StringRef> chunks;
    // The split marker of mpmd-opt's -split-input-file.
    size_t from = 0;
    while (true) {
      size_t at = text.find("// -----", from);
      chunks.push_back(text.slice(from, at));
      if (at == llvm::StringRef::npos)
        break;
      size_t eol = text.find('\n', at);
      from = eol == llvm::StringRef::npos ? text.size() : eol + 1;
    }
    for (size_t c = 0; c < chunks.size(); ++c) {
      Seed seed;
      seed.file = llvm::StringRef(file).starts_with(dir)
                      ? llvm::StringRef(file).drop_front(dir.size())
                            .ltrim('/').str()
                      : file;
      seed.chunk = static_cast<int>(c);
      seed.text = stripComments(chunks[c]);
      if (llvm::StringRef(seed.text).trim().empty())
        continue;
      seed.runPipelines = pipelinesOf[file];
      collectQuotedAfter(seed.text, "named_computation<\"", seed.names);
      collectQuotedAfter(seed.text, "user_origin<\"", seed.names);
      collectQuotedAfter(seed.text, "name=\"", seed.names);
      size_t topo = seed.text.find("topology");
      if (topo != std::string::npos)
        collectQuotedAfter(llvm::StringRef(seed.text).drop_front(topo)
                               .split('\n').first,
                           "<\"", seed.meshes);
      for (auto [pos, len] : opNameSpans(seed.text))
        ops.insert(seed.text.substr(pos, len));
      collectStrings(seed.text, strings);
      llvm::SmallVector<llvm::StringRef> seedLines;
      llvm::StringRef(seed.text).split(seedLines, '\n', -1, false);
      for (llvm::StringRef l : seedLines)
        if (l.size() < 200)
          lineSet.insert(l.str());
      corpus.seeds.push_back(std::move(seed));
    }
  }
  corpus.opNames.assign(ops.begin(), ops.end());
  corpus.strings.assign(strings.begin(), strings.end());
  corpus.lines.assign(lineSet.begin(), lineSet.end());
  return !corpus.seeds.empty();
}

//===----------------------------------------------------------------------===//
// Inputs: a seed, a pipeline, mutations.
//===----------------------------------------------------------------------===//

struct Input {
  const Seed *seed = nullptr;
  std::string text;
  Pipeline pipeline;
  std::vector<std::string> mutations;  // what was done, for the report
  /// Mutations of the parsed module (operands, attributes, ops), applied
  /// when the text parses and verifies; see mutateModule.
  unsigned irMutations = 0;
};

const char *const kSchedules[] = {"none",  "gpipe", "1f1b",
                                  "interleaved-1f1b", "zero-bubble-h1",
                                  "explicit"};
const char *const kElementTypes[] = {"f32", "f16", "bf16", "f64", "i1",
                                     "i8",  "i32", "i64",  "ui32", "index",
                                     "complex<f32>"};
const char *const kNumbers[] = {"0", "1", "2", "3", "-1", "4", "7", "8",
                                "16", "64", "255", "1024", "65536",
                                "2147483647", "-2147483648",
                                "9223372036854775807", "4294967296"};
const char *const kTokens[] = {"{", "}", "(", ")", "<", ">", "[", "]", ",",
                               ":", "=", "%", "#", "!", "\"", "->", "x",
                               "?", "0", "^bb0"};

std::string assignmentOf(const Seed &seed, Rng &rng) {
  if (seed.names.empty())
    return "";
  std::vector<std::string> meshes = seed.meshes;
  if (meshes.empty())
    meshes.push_back("m1");
  bool roundRobin = rng.chance(60);
  bool stages = rng.chance(50);
  std::string out = "assignment=";
  for (size_t i = 0; i < seed.names.size(); ++i) {
    if (i)
      out += ",";
    out += seed.names[i] + "=" + meshes[roundRobin ? i % meshes.size() : 0];
    if (stages)
      out += ":" + std::to_string(roundRobin ? i : 0);
  }
  return out;
}

std::string optimizeElement(Rng &rng) {
  std::string opts = std::string("schedule=") +
                     kSchedules[rng.below(rng.chance(95) ? 5 : 6)];
  if (rng.chance(20))
    opts += " split-backward=true";
  if (rng.chance(20))
    opts += " merge-last-stage=true";
  return "mpmd-optimize{" + opts + "}";
}

/// The pipeline of input `rng`: a RUN line's, the whole partitioner, or the
/// part of it after import (for seeds that are already mpmd programs).
Pipeline pipelineFor(const Seed &seed, Rng &rng) {
  unsigned roll = rng.below(100);
  if (!seed.runPipelines.empty() && roll < 35)
    return rng.pick(seed.runPipelines);
  Pipeline p;
  if (roll < 80) {
    std::string opts = assignmentOf(seed, rng);
    if (rng.chance(20))
      opts += std::string(opts.empty() ? "" : " ") + "infer-transfers=true";
    if (rng.chance(10))
      opts += std::string(opts.empty() ? "" : " ") +
              "infer-cross-mesh-reductions=true";
    p.elements = "mpmd-import" + (opts.empty() ? "" : "{" + opts + "}");
    // Sometimes stop early: import only, or without sharding.
    unsigned depth = rng.below(10);
    if (depth == 0)
      return p;
    p.elements += "," + optimizeElement(rng);
    if (depth >= 3)
      p.elements += ",mpmd-sharding";
    p.elements += ",mpmd-export";
    p.plan = true;
    return p;
  }
  switch (rng.below(4)) {
  case 0:
    p.elements = optimizeElement(rng);
    return p;
  case 1:
    p.elements = "mpmd-sharding";
    return p;
  case 2:
    p.elements = "mpmd-export";
    p.plan = true;
    return p;
  default:
    p.elements = optimizeElement(rng) + ",mpmd-sharding,mpmd-export";
    p.plan = true;
    return p;
  }
}

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t from = 0;
  while (from < text.size()) {
    size_t eol = text.find('\n', from);
    if (eol == std::string::npos)
      eol = text.size();
    lines.push_back(text.substr(from, eol - from));
    from = eol + 1;
  }
  return lines;
}

std::string joinLines(const std::vector<std::string> &lines) {
  std::string out;
  for (const std::string &l : lines) {
    out += l;
    out += '\n';
  }
  return out;
}

/// Spans [pos, len) of SSA value names (`%x`, `%0#1`).
std::vector<std::pair<size_t, size_t>> valueSpans(llvm::StringRef text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%')
      continue;
    size_t j = i + 1;
    while (j < text.size() && (isIdentChar(text[j]) || text[j] == '#'))
      ++j;
    if (j > i + 1)
      spans.push_back({i, j - i});
    i = j - 1;
  }
  return spans;
}

/// Spans of decimal integers that are not part of a name.
std::vector<std::pair<size_t, size_t>> numberSpans(llvm::StringRef text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!isdigit(static_cast<unsigned char>(text[i])))
      continue;
    if (i && (isalpha(static_cast<unsigned char>(text[i - 1])) ||
              text[i - 1] == '_' || text[i - 1] == '%' ||
              text[i - 1] == '#' || text[i - 1] == '^')) {
      while (i < text.size() && isIdentChar(text[i]))
        ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && isdigit(static_cast<unsigned char>(text[j])))
      ++j;
    spans.push_back({i, j - i});
    i = j;
  }
  return spans;
}

/// Spans of element types (`f32`, `i64`, ...) as whole words.
std::vector<std::pair<size_t, size_t>> elementTypeSpans(llvm::StringRef text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i && (isalnum(static_cast<unsigned char>(text[i - 1])) ||
              text[i - 1] == '_' || text[i - 1] == '%' || text[i - 1] == '"'))
      continue;
    for (const char *t : kElementTypes) {
      llvm::StringRef ty(t);
      if (text.substr(i).starts_with(ty) &&
          (i + ty.size() >= text.size() ||
           !isalnum(static_cast<unsigned char>(text[i + ty.size()])))) {
        spans.push_back({i, ty.size()});
        break;
      }
    }
  }
  return spans;
}

/// Spans of string literal contents.
std::vector<std::pair<size_t, size_t>> stringSpans(llvm::StringRef text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"')
      continue;
    size_t j = i + 1;
    while (j < text.size() && text[j] != '"' && text[j] != '\n') {
      if (text[j] == '\\')
        ++j;
      ++j;
    }
    if (j < text.size() && text[j] == '"')
      spans.push_back({i + 1, j - i - 1});
    i = j;
  }
  return spans;
}

/// Spans of the dimension lists of shaped types (`4x8` in `tensor<4x8xf32>`).
std::vector<std::pair<size_t, size_t>> shapeSpans(llvm::StringRef text) {
  std::vector<std::pair<size_t, size_t>> spans;
  size_t pos = 0;
  while ((pos = text.find("tensor<", pos)) != llvm::StringRef::npos) {
    pos += 7;
    size_t j = pos;
    while (j < text.size() &&
           (isdigit(static_cast<unsigned char>(text[j])) || text[j] == 'x' ||
            text[j] == '?'))
      ++j;
    // Back off to the last 'x' before the element type.
    size_t end = j;
    while (end > pos && text[end - 1] != 'x')
      --end;
    if (end > pos)
      spans.push_back({pos, end - pos});
  }
  return spans;
}

std::string randomShape(Rng &rng) {
  size_t rank = rng.below(5);
  std::string out;
  for (size_t i = 0; i < rank; ++i) {
    static const char *const dims[] = {"1", "2", "3", "4", "8", "16", "0",
                                       "?", "1000000000"};
    out += dims[rng.below(rng.chance(90) ? 6 : 9)];
    out += "x";
  }
  return out;
}

/// Applies one mutation to `in` and says which.
void mutateOnce(Input &in, const Corpus &corpus, Rng &rng) {
  std::string &text = in.text;
  auto replaceSpan = [&](std::pair<size_t, size_t> span,
                         const std::string &with) {
    text.replace(span.first, span.second, with);
  };
  auto note = [&](std::string what) { in.mutations.push_back(std::move(what)); };
  // Weighted choice of a mutator.
  static const unsigned weights[] = {
      8,  // 0 delete a line
      6,  // 1 duplicate a line
      5,  // 2 swap two lines
      4,  // 3 move a line
      10, // 4 change a number
      12, // 5 use another value
      8,  // 6 another element type
      8,  // 7 another shape
      10, // 8 another op name
      2,  // 9 truncate
      6,  // 10 edit a string literal
      7,  // 11 another string literal
      3,  // 12 flip a byte
      4,  // 13 splice a line of another seed
      3,  // 14 delete a run of lines
      3,  // 15 insert a token
      4,  // 16 mutate the pipeline options
  };
  unsigned total = 0;
  for (unsigned w : weights)
    total += w;
  unsigned roll = rng.below(total), kind = 0;
  while (roll >= weights[kind])
    roll -= weights[kind++];

  switch (kind) {
  case 0:
  case 1:
  case 2:
  case 3:
  case 13:
  case 14: {
    std::vector<std::string> lines = splitLines(text);
    if (lines.empty())
      return;
    size_t i = rng.below(lines.size()), j = rng.below(lines.size());
    if (kind == 0) {
      note("delete line " + std::to_string(i + 1));
      lines.erase(lines.begin() + i);
    } else if (kind == 1) {
      note("duplicate line " + std::to_string(i + 1));
      lines.insert(lines.begin() + i, lines[i]);
    } else if (kind == 2) {
      if (rng.chance(50))
        j = std::min(i + 1, lines.size() - 1);
      note("swap lines " + std::to_string(i + 1) + "," + std::to_string(j + 1));
      std::swap(lines[i], lines[j]);
    } else if (kind == 3) {
      note("move line " + std::to_string(i + 1) + " to " +
           std::to_string(j + 1));
      std::string line = lines[i];
      lines.erase(lines.begin() + i);
      lines.insert(lines.begin() + std::min(j, lines.size()), line);
    } else if (kind == 13) {
      if (corpus.lines.empty())
        return;
      note("insert a corpus line at " + std::to_string(i + 1));
      lines.insert(lines.begin() + i, rng.pick(corpus.lines));
    } else {
      size_t n = std::min<size_t>(2 + rng.below(5), lines.size() - i);
      note("delete lines " + std::to_string(i + 1) + "-" +
           std::to_string(i + n));
      lines.erase(lines.begin() + i, lines.begin() + i + n);
    }
    text = joinLines(lines);
    return;
  }
  case 4: {
    auto spans = numberSpans(text);
    if (spans.empty())
      return;
    auto span = spans[rng.below(spans.size())];
    std::string old = text.substr(span.first, span.second);
    std::string with;
    if (rng.chance(50)) {
      long long v = atoll(old.c_str());
      with = std::to_string(v + (rng.chance(50) ? 1 : -1));
    } else {
      with = kNumbers[rng.below(std::size(kNumbers))];
    }
    note("number " + old + " -> " + with);
    replaceSpan(span, with);
    return;
  }
  case 5: {
    auto spans = valueSpans(text);
    if (spans.size() < 2)
      return;
    auto span = spans[rng.below(spans.size())];
    auto other = spans[rng.below(spans.size())];
    std::string with = text.substr(other.first, other.second);
    if (rng.chance(10))
      with = "%undefined" + std::to_string(rng.below(3));
    note("value " + text.substr(span.first, span.second) + " -> " + with);
    replaceSpan(span, with);
    return;
  }
  case 6: {
    auto spans = elementTypeSpans(text);
    if (spans.empty())
      return;
    auto span = spans[rng.below(spans.size())];
    std::string with = kElementTypes[rng.below(std::size(kElementTypes))];
    note("element type " + text.substr(span.first, span.second) + " -> " +
         with);
    replaceSpan(span, with);
    return;
  }
  case 7: {
    auto spans = shapeSpans(text);
    if (spans.empty())
      return;
    auto span = spans[rng.below(spans.size())];
    std::string with;
    if (rng.chance(60)) {
      // One dimension changed.
      std::string dims = text.substr(span.first, span.second);
      std::vector<std::string> parts;
      llvm::SmallVector<llvm::StringRef> split;
      llvm::StringRef(dims).drop_back().split(split, 'x');
      for (llvm::StringRef s : split)
        parts.push_back(s.str());
      if (parts.empty())
        return;
      static const char *const dims2[] = {"1", "2", "3", "4", "5", "8", "0",
                                          "?", "16"};
      parts[rng.below(parts.size())] = dims2[rng.below(std::size(dims2))];
      for (const std::string &p : parts)
        with += p + "x";
    } else {
      with = randomShape(rng);
    }
    note("shape " + text.substr(span.first, span.second) + " -> " + with);
    replaceSpan(span, with);
    return;
  }
  case 8: {
    auto spans = opNameSpans(text);
    if (spans.empty() || corpus.opNames.empty())
      return;
    auto span = spans[rng.below(spans.size())];
    const std::string &with = rng.pick(corpus.opNames);
    note("op " + text.substr(span.first, span.second) + " -> " + with);
    replaceSpan(span, with);
    return;
  }
  case 9: {
    if (text.empty())
      return;
    size_t at = rng.below(text.size());
    note("truncate at " + std::to_string(at));
    text.resize(at);
    return;
  }
  case 10: {
    auto spans = stringSpans(text);
    if (spans.empty())
      return;
    auto span = spans[rng.below(spans.size())];
    size_t at = span.first + rng.below(span.second + 1);
    static const char alphabet[] = "abmxyz0129_:,=#()[]<>\\ ";
    char c = alphabet[rng.below(sizeof(alphabet) - 1)];
    switch (rng.below(3)) {
    case 0:
      text.insert(text.begin() + at, c);
      note("string: insert '" + std::string(1, c) + "'");
      return;
    case 1:
      if (span.second) {
        text.erase(span.first + rng.below(span.second), 1);
        note("string: delete a character");
      }
      return;
    default:
      if (span.second) {
        text[span.first + rng.below(span.second)] = c;
        note("string: replace a character by '" + std::string(1, c) + "'");
      }
      return;
    }
  }
  case 11: {
    auto spans = stringSpans(text);
    if (spans.empty() || corpus.strings.empty())
      return;
    auto span = spans[rng.below(spans.size())];
    const std::string &with = rng.pick(corpus.strings);
    note("string \"" + text.substr(span.first, span.second) + "\" -> \"" +
         with + "\"");
    replaceSpan(span, with);
    return;
  }
  case 12: {
    if (text.empty())
      return;
    size_t at = rng.below(text.size());
    text[at] = static_cast<char>(text[at] ^ (1u << rng.below(7)));
    note("flip a bit at " + std::to_string(at));
    return;
  }
  case 15: {
    size_t at = rng.below(text.size() + 1);
    const char *tok = kTokens[rng.below(std::size(kTokens))];
    text.insert(at, tok);
    note(std::string("insert '") + tok + "' at " + std::to_string(at));
    return;
  }
  case 16: {
    std::string &p = in.pipeline.elements;
    size_t open = p.find('{');
    if (open == std::string::npos || rng.chance(20)) {
      // Another schedule, or an option that does not exist.
      static const char *const extras[] = {
          "mpmd-optimize{schedule=zigzag}", "mpmd-optimize{merge-rules=f}",
          "mpmd-import{assignment=}",       "mpmd-import{input-assignment=0=m1}",
          "mpmd-optimize{schedule=explicit order=m1=a#0|b#0}",
          "mpmd-merge-fragments{merge-last-stage=true}", "mpmd-split-backward",
          "mpmd-infer-meshes", "canonicalize", "cse"};
      std::string extra = extras[rng.below(std::size(extras))];
      p = p.empty() ? extra : (rng.chance(50) ? extra + "," + p : p + "," + extra);
      note("pipeline: add " + extra);
      return;
    }
    size_t close = p.find('}', open);
    if (close == std::string::npos || close == open + 1)
      return;
    size_t at = open + 1 + rng.below(close - open - 1);
    static const char alphabet[] = "=,:|#()m0123 abfx";
    char c = alphabet[rng.below(sizeof(alphabet) - 1)];
    if (rng.chance(50)) {
      p[at] = c;
    } else {
      p.erase(at, 1);
    }
    note("pipeline options edited: " + p);
    return;
  }
  }
}

Input makeInput(const Corpus &corpus, uint64_t runSeed, int64_t index,
                int64_t maxMutations) {
  Rng rng(runSeed, static_cast<uint64_t>(index));
  Input in;
  // Mostly seeds that are valid programs (most error tests stop at the
  // parser or verifier whatever is mutated).
  if (!corpus.validSeeds.empty() && rng.chance(75))
    in.seed = &corpus.seeds[rng.pick(corpus.validSeeds)];
  else
    in.seed = &corpus.seeds[rng.below(corpus.seeds.size())];
  in.text = in.seed->text;
  in.pipeline = pipelineFor(*in.seed, rng);
  // Mostly one to three mutations; sometimes none (the seed as is), sometimes
  // many.
  unsigned roll = rng.below(100);
  size_t n = roll < 3 ? 0 : roll < 90 ? 1 + rng.below(3) : 4 + rng.below(8);
  if (maxMutations >= 0)
    n = std::min<size_t>(n, maxMutations);
  // Some inputs mutate the module after it parsed instead of (or besides)
  // its text: type-correct edits reach the passes far more often.
  unsigned ir = rng.below(100);
  if (ir < 40 && n > 0) {
    in.irMutations = 1 + rng.below(ir < 10 ? 6 : 3);
    n = rng.chance(70) ? 0 : n - 1;
    if (maxMutations >= 0)
      in.irMutations = std::min<unsigned>(in.irMutations, maxMutations);
  }
  for (size_t i = 0; i < n; ++i)
    mutateOnce(in, corpus, rng);
  return in;
}

//===----------------------------------------------------------------------===//
// Shared memory between the parent and its workers.
//===----------------------------------------------------------------------===//

enum Outcome {
  kParseError,
  kVerifyError,
  kBadPipeline,
  kPassFailed,
  kPlanFailed,
  kAccepted,       // parse, verify and pipeline succeeded
  kPlanBuilt,      // ...and the plan was asked for and built
  kRoundtripBad,   // the printed result did not parse back
  kNumOutcomes
};

enum Stage : int32_t {
  kIdle,
  kGenerate,
  kParse,
  kVerify,
  kBuildPipeline,
  kRunPipeline,
  kMutate,
  kPlan,
  kPrint,
  kReparse,
  kTeardown
};

const char *stageName(int32_t s) {
  switch (s) {
  case kIdle:
    return "idle";
  case kGenerate:
    return "generating the input";
  case kParse:
    return "parsing";
  case kVerify:
    return "verifying";
  case kBuildPipeline:
    return "building the pass pipeline";
  case kRunPipeline:
    return "running the pass pipeline";
  case kMutate:
    return "mutating the parsed module";
  case kPlan:
    return "building the execution plan";
  case kPrint:
    return "printing the result";
  case kReparse:
    return "parsing the printed result back";
  case kTeardown:
    return "destroying the module or context";
  }
  return "?";
}

constexpr int kMaxPasses = 96;

struct PassStat {
  char name[56];
  uint64_t ran;
  uint64_t failed;
};

/// What one worker slot publishes. Only its worker writes it (the parent
/// reads it), so plain volatile fields do.
struct Slot {
  volatile int64_t current;  // the input running, -1 between inputs
  volatile uint64_t startNs; // when it started
  volatile int32_t stage;
  volatile int32_t finished; // the worker ran its whole chunk
  char pass[64];             // the pass running, "" outside passes
  char fatal[256];           // an LLVM fatal error's reason
  uint64_t outcomes[kNumOutcomes];
  uint64_t digest;           // sum of per-input outcome hashes
  uint64_t done;             // inputs completed
  uint32_t roundtripsSaved;  // printed results that did not parse back
  int32_t numPasses;
  PassStat passes[kMaxPasses];
};

constexpr size_t kMaxSeeds = 1 << 14;

struct Shared {
  volatile int32_t stop;
  uint8_t seedValid[kMaxSeeds];
  Slot slots[64];
};

Shared *shared = nullptr;
Slot *mySlot = nullptr;

uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}

void copyName(char *dst, size_t size, llvm::StringRef src) {
  size_t n = std::min(size - 1, src.size());
  memcpy(dst, src.data(), n);
  dst[n] = 0;
}

PassStat *passStat(llvm::StringRef name) {
  for (int i = 0; i < mySlot->numPasses; ++i)
    if (name == mySlot->passes[i].name)
      return &mySlot->passes[i];
  if (mySlot->numPasses == kMaxPasses)
    return nullptr;
  PassStat *stat = &mySlot->passes[mySlot->numPasses++];
  copyName(stat->name, sizeof(stat->name), name);
  return stat;
}

class TrackPasses : public mlir::PassInstrumentation {
public:
  void runBeforePass(mlir::Pass *pass, mlir::Operation *) override {
    llvm::StringRef name = pass->getArgument();
    if (name.empty())
      name = pass->getName();
    copyName(mySlot->pass, sizeof(mySlot->pass), name);
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *) override {
    if (PassStat *stat = passStat(mySlot->pass))
      ++stat->ran;
    mySlot->pass[0] = 0;
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *) override {
    if (PassStat *stat = passStat(mySlot->pass)) {
      ++stat->ran;
      ++stat->failed;
    }
    mySlot->pass[0] = 0;
  }
};

//===----------------------------------------------------------------------===//
// Mutations of a parsed module.
//===----------------------------------------------------------------------===//

/// Values of type `type` visible at `op` without crossing an isolated
/// region: earlier results and block arguments of its block and of the
/// blocks of its ancestors.
std::vector<mlir::Value> visibleValues(mlir::Operation *op, mlir::Type type) {
  std::vector<mlir::Value> out;
  for (mlir::Operation *cur = op; cur;) {
    mlir::Block *block = cur->getBlock();
    if (!block)
      break;
    for (mlir::BlockArgument arg : block->getArguments())
      if (arg.getType() == type)
        out.push_back(arg);
    for (mlir::Operation &prev : *block) {
      if (&prev == cur)
        break;
      for (mlir::Value r : prev.getResults())
        if (r.getType() == type)
          out.push_back(r);
    }
    mlir::Operation *parent = cur->getParentOp();
    if (!parent || parent->hasTrait<mlir::OpTrait::IsIsolatedFromAbove>())
      break;
    cur = parent;
  }
  return out;
}

mlir::Attribute mutateAttribute(mlir::Attribute attr, const Corpus &corpus,
                                Rng &rng) {
  if (!attr)
    return nullptr;
  mlir::MLIRContext *ctx = attr.getContext();
  auto newInt = [&](int64_t old) -> int64_t {
    static const int64_t values[] = {0, 1, 2, 3, -1, 4, 8, 64, 1 << 20,
                                     INT32_MAX, INT64_MAX, INT64_MIN};
    return rng.chance(50) ? old + (rng.chance(50) ? 1 : -1)
                          : values[rng.below(std::size(values))];
  };
  if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(attr)) {
    if (!i.getType().isIntOrIndex())
      return nullptr;
    unsigned width = i.getType().isIndex() ? 64 : i.getType().getIntOrFloatBitWidth();
    int64_t v = width == 1 ? !i.getValue().getBoolValue()
                           : newInt(i.getValue().getSExtValue());
    return mlir::IntegerAttr::get(i.getType(),
                                  llvm::APInt(width, static_cast<uint64_t>(v),
                                              /*isSigned=*/true,
                                              /*implicitTrunc=*/true));
  }
  if (auto str = llvm::dyn_cast<mlir::StringAttr>(attr)) {
    if (corpus.strings.empty())
      return nullptr;
    return mlir::StringAttr::get(ctx, rng.pick(corpus.strings));
  }
  if (auto arr = llvm::dyn_cast<mlir::DenseI64ArrayAttr>(attr)) {
    llvm::SmallVector<int64_t> v(arr.asArrayRef());
    if (v.empty() || rng.chance(20)) {
      v.push_back(newInt(0));
    } else if (rng.chance(20)) {
      v.erase(v.begin() + rng.below(v.size()));
    } else if (rng.chance(30) && v.size() > 1) {
      std::swap(v[rng.below(v.size())], v[rng.below(v.size())]);
    } else {
      int64_t &e = v[rng.below(v.size())];
      e = newInt(e);
    }
    return mlir::DenseI64ArrayAttr::get(ctx, v);
  }
  if (auto arr = llvm::dyn_cast<mlir::ArrayAttr>(attr)) {
    llvm::SmallVector<mlir::Attribute> v(arr.getValue());
    if (v.empty())
      return nullptr;
    size_t i = rng.below(v.size());
    if (rng.chance(25)) {
      v.erase(v.begin() + i);
    } else if (rng.chance(25)) {
      v.insert(v.begin() + i, v[rng.below(v.size())]);
    } else {
      mlir::Attribute inner = mutateAttribute(v[i], corpus, rng);
      if (!inner)
        return nullptr;
      v[i] = inner;
    }
    return mlir::ArrayAttr::get(ctx, v);
  }
  if (auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(attr)) {
    llvm::SmallVector<mlir::NamedAttribute> v(dict.getValue());
    if (v.empty())
      return nullptr;
    size_t i = rng.below(v.size());
    if (rng.chance(30)) {
      v.erase(v.begin() + i);
    } else {
      mlir::Attribute inner = mutateAttribute(v[i].getValue(), corpus, rng);
      if (!inner)
        return nullptr;
      v[i].setValue(inner);
    }
    return mlir::DictionaryAttr::get(ctx, v);
  }
  return nullptr;
}

/// Applies `count` mutations to `module`: an operand replaced by another
/// value of its type, operands swapped, an op erased (its uses taken over
/// by values of the same types), moved or cloned, an attribute changed or
/// removed. Appends what it did to `notes`.
void mutateModule(mlir::ModuleOp module, unsigned count, const Corpus &corpus,
                  Rng &rng, std::vector<std::string> *notes) {
  auto note = [&](const std::string &what, mlir::Operation *op) {
    if (notes)
      notes->push_back(what + " (" + op->getName().getStringRef().str() + ")");
  };
  for (unsigned m = 0; m < count; ++m) {
    std::vector<mlir::Operation *> ops;
    module->walk([&](mlir::Operation *op) {
      if (op != module.getOperation())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    mlir::Operation *op = ops[rng.below(ops.size())];
    switch (rng.below(10)) {
    case 0:
    case 1:
    case 2: {  // an operand replaced by a visible value of its type
      if (op->getNumOperands() == 0)
        break;
      unsigned i = rng.below(op->getNumOperands());
      mlir::Type type = op->getOperand(i).getType();
      std::vector<mlir::Value> values = visibleValues(op, type);
      if (values.empty() || rng.chance(15)) {
        // Anywhere in the module: may break dominance or isolation.
        module->walk([&](mlir::Operation *other) {
          for (mlir::Value r : other->getResults())
            if (r.getType() == type)
              values.push_back(r);
        });
      }
      if (values.empty())
        break;
      op->setOperand(i, values[rng.below(values.size())]);
      note("operand " + std::to_string(i) + " replaced", op);
      break;
    }
    case 3: {  // two operands swapped
      if (op->getNumOperands() < 2)
        break;
      unsigned i = rng.below(op->getNumOperands());
      unsigned j = rng.below(op->getNumOperands());
      mlir::Value a = op->getOperand(i), b = op->getOperand(j);
      op->setOperand(i, b);
      op->setOperand(j, a);
      note("operands " + std::to_string(i) + "," + std::to_string(j) +
               " swapped",
           op);
      break;
    }
    case 4: {  // an op erased, its results replaced by other values
      // Not an op with regions: an earlier mutation may have used a value
      // of its body outside, which erasing would leave dangling.
      if (op->hasTrait<mlir::OpTrait::IsTerminator>() ||
          op->getNumRegions() > 0)
        break;
      bool replaced = true;
      for (mlir::Value r : op->getResults()) {
        if (r.use_empty())
          continue;
        std::vector<mlir::Value> values = visibleValues(op, r.getType());
        if (values.empty()) {
          replaced = false;
          break;
        }
        r.replaceAllUsesWith(values[rng.below(values.size())]);
      }
      if (!replaced)
        break;
      note("erased", op);
      op->erase();
      break;
    }
    case 5: {  // an op moved before an earlier sibling
      mlir::Block *block = op->getBlock();
      if (!block || &block->front() == op)
        break;
      std::vector<mlir::Operation *> before;
      for (mlir::Operation &prev : *block) {
        if (&prev == op)
          break;
        before.push_back(&prev);
      }
      op->moveBefore(before[rng.below(before.size())]);
      note("moved up", op);
      break;
    }
    case 6: {  // an op cloned after itself
      if (op->hasTrait<mlir::OpTrait::IsTerminator>() ||
          llvm::isa<mlir::SymbolOpInterface>(op))
        break;
      mlir::OpBuilder builder(op->getContext());
      builder.setInsertionPointAfter(op);
      builder.clone(*op);
      note("cloned", op);
      break;
    }
    case 7:
    case 8: {  // an attribute changed
      llvm::ArrayRef<mlir::NamedAttribute> attrs =
          op->getAttrDictionary().getValue();
      if (attrs.empty())
        break;
      mlir::NamedAttribute attr = attrs[rng.below(attrs.size())];
      mlir::Attribute changed = mutateAttribute(attr.getValue(), corpus, rng);
      if (!changed)
        break;
      op->setAttr(attr.getName(), changed);
      note("attribute '" + attr.getName().str() + "' changed", op);
      break;
    }
    case 9: {  // a discardable attribute removed (an inherent one would
               // leave a null property no text can give)
      llvm::ArrayRef<mlir::NamedAttribute> attrs =
          op->getDiscardableAttrDictionary().getValue();
      if (attrs.empty())
        break;
      mlir::StringAttr name = attrs[rng.below(attrs.size())].getName();
      op->removeDiscardableAttr(name);
      note("attribute '" + name.str() + "' removed", op);
      break;
    }
    }
  }
}

//===----------------------------------------------------------------------===//
// The worker: runs inputs with one context.
//===----------------------------------------------------------------------===//

mlir::DialectRegistry &registry() {
  static mlir::DialectRegistry *r = [] {
    auto *reg = new mlir::DialectRegistry;
    mlir::mpmd::registerAllDialects(*reg);
    return reg;
  }();
  return *r;
}

std::unique_ptr<mlir::MLIRContext> makeContext() {
  auto context = std::make_unique<mlir::MLIRContext>(
      registry(), mlir::MLIRContext::Threading::DISABLED);
  context->allowUnregisteredDialects(true);
  context->printOpOnDiagnostic(false);
  context->printStackTraceOnDiagnostic(false);
  context->loadAllAvailableDialects();
  return context;
}

/// Collects the first error of an input (its hash goes into the digest).
struct DiagnosticSink {
  std::string firstError;
  bool verbose = false;
};

DiagnosticSink sink;

void installHandler(mlir::MLIRContext &context) {
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
        sink.firstError.empty())
      sink.firstError = diag.str();
    if (sink.verbose)
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return mlir::success();
  });
}

/// In a replay: where the worker writes the module it compiles after its
/// in-memory mutations (the reproducer), "" otherwise.
std::string effectiveInputPath;

/// Keeps a printed result that does not parse back (the first few of each
/// worker slot), with the error, under the crash directory.
void saveRoundtrip(const Input &in, int64_t index, const FuzzOptions &options,
                   const std::string &printed) {
  if (mySlot->roundtripsSaved >= 3)
    return;
  ++mySlot->roundtripsSaved;
  std::string path = options.crashDir + "/roundtrip-seed" +
                     std::to_string(options.seed) + "-input" +
                     std::to_string(index) + ".mlir";
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return;
  std::string error = sink.firstError;
  std::replace(error.begin(), error.end(), '\n', ' ');
  os << "// mpmd-fuzz: what the compiler printed does not parse back: "
     << error << "\n// seed module: " << in.seed->file << " chunk "
     << in.seed->chunk << "; pipeline: " << in.pipeline.elements
     << "\n// input: mpmd-fuzz --corpus " << options.corpus << " --seed "
     << options.seed << " --start " << index
     << " --count 1 --no-fork --print-input\n"
     << "// reproduce: mpmd-opt " << path << "\n"
     << printed;
}

/// Applies the input's in-memory mutations and verifies the result. In a
/// replay, writes the mutated module (and what was mutated) out first.
mlir::LogicalResult mutateAndVerify(mlir::ModuleOp module, const Corpus &corpus,
                                    const Input &in, int64_t index,
                                    uint64_t runSeed) {
  mySlot->stage = kMutate;
  Rng rng(runSeed ^ 0x5eedULL, static_cast<uint64_t>(index));
  std::vector<std::string> notes;
  bool dump = !effectiveInputPath.empty();
  mutateModule(module, in.irMutations, corpus, rng, dump ? &notes : nullptr);
  if (dump) {
    std::error_code ec;
    llvm::raw_fd_ostream os(effectiveInputPath, ec);
    if (!ec) {
      os << "// mutations of the parsed module:";
      for (const std::string &n : notes)
        os << " [" << n << "]";
      os << "\n";
      mlir::OpPrintingFlags flags;
      flags.printGenericOpForm();
      module->print(os, flags);
    }
  }
  mySlot->stage = kVerify;
  return mlir::verify(module);
}

Outcome runInput(mlir::MLIRContext &context, const Corpus &corpus,
                 const Input &in, int64_t index, const FuzzOptions &options,
                 uint64_t &hash) {
  sink.firstError.clear();
  Outcome outcome;
  hash = 0;
  {
    mySlot->stage = kParse;
    mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
    // What MLIR's parser would crash on, every entry point rejects first
    // (mpmd/Support/ParserGuards.h).
    mlir::OwningOpRef<mlir::ModuleOp> module;
    if (!mlir::mpmd::findParserHazard(in.text))
      module = mlir::parseSourceString<mlir::ModuleOp>(in.text, config, "input");
    if (!module) {
      outcome = kParseError;
    } else if (mySlot->stage = kVerify, mlir::failed(mlir::verify(*module))) {
      outcome = kVerifyError;
    } else if (in.irMutations &&
               mlir::failed(mutateAndVerify(*module, corpus, in, index,
                                            options.seed))) {
      outcome = kVerifyError;
    } else {
      mySlot->stage = kBuildPipeline;
      mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
      pm.enableVerifier(true);
      pm.addInstrumentation(std::make_unique<TrackPasses>());
      std::string report, optionError;
      llvm::raw_string_ostream os(report);
      mlir::mpmd::optionErrorSink = &optionError;
      mlir::LogicalResult built =
          mlir::parsePassPipeline(in.pipeline.elements, pm, os);
      mlir::mpmd::optionErrorSink = nullptr;
      if (mlir::failed(built)) {
        outcome = kBadPipeline;
        sink.firstError = report;
      } else if (mySlot->stage = kRunPipeline,
                 mlir::failed(pm.run(*module))) {
        outcome = kPassFailed;
      } else {
        outcome = kAccepted;
        if (in.pipeline.plan) {
          mySlot->stage = kPlan;
          mlir::FailureOr<std::string> plan =
              mlir::mpmd::buildExecutionPlan(*module);
          if (mlir::failed(plan)) {
            outcome = kPlanFailed;
          } else {
            outcome = kPlanBuilt;
            hash = fnv1a(*plan, hash);
          }
        }
        if (outcome != kPlanFailed) {
          mySlot->stage = kPrint;
          std::string printed;
          llvm::raw_string_ostream pos(printed);
          module->print(pos);
          hash = fnv1a(printed, hash);
          if (options.roundtrip) {
            mySlot->stage = kReparse;
            mlir::ParserConfig config2(&context);
            mlir::OwningOpRef<mlir::ModuleOp> again =
                mlir::parseSourceString<mlir::ModuleOp>(printed, config2,
                                                        "printed");
            if (!again) {
              outcome = kRoundtripBad;
              saveRoundtrip(in, index, options, printed);
            }
          }
        }
      }
    }
    mySlot->stage = kTeardown;
  }
  hash = fnv1a(sink.firstError, hash * 31 + outcome);
  return outcome;
}

void recordFatal(void *, const char *reason, bool) {
  if (mySlot)
    copyName(mySlot->fatal, sizeof(mySlot->fatal), reason);
  // Let the parent see it as a crash.
  _exit(70);
}

void outOfMemory() {
  if (mySlot)
    copyName(mySlot->fatal, sizeof(mySlot->fatal), "out of memory");
  _exit(71);
}

/// The worker: inputs [from, to) with `context` (or a fresh context per
/// input). Never returns.
[[noreturn]] void worker(mlir::MLIRContext *context, const Corpus &corpus,
                         const FuzzOptions &options, int slot, int64_t from,
                         int64_t to, bool replay) {
  mySlot = &shared->slots[slot];
  llvm::install_fatal_error_handler(recordFatal, nullptr);
  std::set_new_handler(outOfMemory);
  if (options.memoryMb > 0) {
    rlimit limit;
    limit.rlim_cur = limit.rlim_max =
        static_cast<rlim_t>(options.memoryMb) << 20;
    setrlimit(RLIMIT_AS, &limit);
  }
  if (replay) {
    llvm::sys::PrintStackTraceOnErrorSignal("mpmd-fuzz");
    sink.verbose = true;
  } else if (!options.verbose && !options.noFork) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
      close(devnull);
    }
  }
  sink.verbose = sink.verbose || options.verbose;
  // A replay runs its input even after the deadline.
  for (int64_t i = from; i < to && (replay || !shared->stop); ++i) {
    mySlot->stage = kGenerate;
    mySlot->startNs = nowNs();
    mySlot->current = i;
    Input in = makeInput(corpus, options.seed, i, options.maxMutations);
    if (options.printInput)
      llvm::errs() << "// input " << i << ": " << in.seed->file << "#"
                   << in.seed->chunk << " pipeline '" << in.pipeline.elements
                   << "'" << (in.pipeline.plan ? " +plan" : "") << "\n"
                   << in.text;
    uint64_t hash;
    Outcome outcome;
    if (options.freshContext) {
      std::unique_ptr<mlir::MLIRContext> fresh = makeContext();
      installHandler(*fresh);
      outcome = runInput(*fresh, corpus, in, i, options, hash);
      fresh.reset();
    } else {
      outcome = runInput(*context, corpus, in, i, options, hash);
    }
    if (options.printInput || options.verbose)
      llvm::errs() << "// outcome " << outcome << ": " << sink.firstError
                   << "\n";
    ++mySlot->outcomes[outcome];
    mySlot->digest += hash ^ (static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL);
    ++mySlot->done;
    mySlot->current = -1;
    mySlot->stage = kIdle;
  }
  mySlot->finished = 1;
  if (options.noFork)
    exit(0);
  // Skip the destructors of the context and the corpus: the parent has
  // them.
  _exit(0);
}

//===----------------------------------------------------------------------===//
// The parent: hands out chunks, watches workers, records findings.
//===----------------------------------------------------------------------===//

struct Finding {
  std::string kind;  // crash, hang, oom
  int64_t index;
  std::string what;
  std::string path;
  std::string replay;  // what the replay saw
};

std::string describeStatus(int status, const Slot &slot) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    if (code == 70)
      return std::string("LLVM fatal error: ") + slot.fatal;
    if (code == 71)
      return "out of memory (over --memory-mb)";
    return "exit code " + std::to_string(code) + " in the middle of a run";
  }
  return "unknown status " + std::to_string(status);
}

std::string shellQuote(llvm::StringRef s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

class Parent {
public:
  Parent(const FuzzOptions &options, const Corpus &corpus,
         mlir::MLIRContext *context, const char *argv0)
      : options(options), corpus(corpus), context(context), argv0(argv0) {}

  int run();

private:
  struct Worker {
    pid_t pid = -1;
    int64_t end = 0;  // the chunk is [.., end)
  };

  pid_t spawn(int slot, int64_t from, int64_t to, bool replay,
              const std::string &log = "");
  void record(const std::string &kind, int64_t index, const std::string &what,
              const Slot &slot);
  std::string replay(int64_t index, const std::string &log,
                     const std::string &effective);
  void summary(double seconds);

  const FuzzOptions &options;
  const Corpus &corpus;
  mlir::MLIRContext *context;
  const char *argv0;
  std::vector<Finding> findings;
  /// How often each kind of finding (kind, what, where) was seen.
  std::map<std::string, unsigned> signatures;
  static constexpr unsigned kKeepPerSignature = 5;
  uint64_t slowButDone = 0;
};

pid_t Parent::spawn(int slot, int64_t from, int64_t to, bool replay,
                    const std::string &log) {
  Slot &s = shared->slots[slot];
  s.current = -1;
  s.stage = kIdle;
  s.finished = 0;
  s.pass[0] = 0;
  s.fatal[0] = 0;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    perror("mpmd-fuzz: fork");
    exit(2);
  }
  if (pid == 0) {
    if (!log.empty()) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
    }
    worker(context, corpus, options, slot, from, to, replay);
  }
  return pid;
}

/// Runs input `index` alone in a fresh worker (stack traces on, stderr to
/// `log`), with twice the timeout; says what happened.
std::string Parent::replay(int64_t index, const std::string &log,
                           const std::string &effective) {
  const int slot = 63;
  Slot &s = shared->slots[slot];
  memset(&s, 0, sizeof(s));
  effectiveInputPath = effective;
  pid_t pid = spawn(slot, index, index + 1, /*replay=*/true, log);
  effectiveInputPath.clear();
  uint64_t begin = nowNs();
  int status = 0;
  while (true) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid)
      break;
    if ((nowNs() - begin) / 1000000 >
        static_cast<uint64_t>(2 * options.timeoutMs + 1000)) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "hung again (killed after " +
             std::to_string(2 * options.timeoutMs + 1000) + " ms)";
    }
    usleep(2000);
  }
  double ms = (nowNs() - begin) / 1e6;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && s.finished)
    return "did not reproduce: completed in " + std::to_string(ms) + " ms";
  return "reproduced: " + describeStatus(status, s) + " while " +
         stageName(s.stage) +
         (s.pass[0] ? std::string(" in pass '") + s.pass + "'" : "");
}

void Parent::record(const std::string &kind, int64_t index,
                    const std::string &what, const Slot &slot) {
  Input in = makeInput(corpus, options.seed, index, options.maxMutations);
  std::string where = stageName(slot.stage);
  if (slot.pass[0])
    where += std::string(" (pass '") + slot.pass + "')";
  std::string base = options.crashDir + "/" + kind + "-seed" +
                     std::to_string(options.seed) + "-input" +
                     std::to_string(index);
  std::string path = base + ".mlir", log = base + ".log";
  std::string effective = base + ".effective";
  Finding finding{kind, index, what + " while " + where, path, ""};
  // The same failure again and again: count it, keep the first few.
  unsigned &seen = signatures[kind + ": " + finding.what];
  if (++seen > kKeepPerSignature) {
    finding.path.clear();
    finding.replay = "not replayed (seen before)";
    findings.push_back(std::move(finding));
    return;
  }
  llvm::sys::fs::remove(effective);
  finding.replay = replay(index, log, effective);
  // With in-memory mutations, the module the compiler saw is what the
  // replay wrote; otherwise it is the text.
  std::string body = in.text;
  if (auto buffer = llvm::MemoryBuffer::getFile(effective)) {
    body = (*buffer)->getBuffer().str();
    llvm::sys::fs::remove(effective);
  }
  if (kind == "hang" &&
      llvm::StringRef(finding.replay).starts_with("did not reproduce")) {
    // A slow input on a loaded machine, not a hang.
    ++slowButDone;
    return;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec) {
    os << "// mpmd-fuzz finding: " << kind << ": " << finding.what << "\n"
       << "// replayed alone: " << finding.replay << " (output in " << log
       << ")\n"
       << "// seed module: " << in.seed->file << " chunk " << in.seed->chunk
       << "\n// mutations:";
    for (const std::string &m : in.mutations)
      os << " [" << m << "]";
    if (in.irMutations)
      os << " + " << in.irMutations
         << " mutation(s) of the parsed module (listed below)";
    os << "\n// pipeline: " << in.pipeline.elements
       << (in.pipeline.plan ? " + execution plan" : "") << "\n"
       << "// reproduce: mpmd-fuzz --corpus " << options.corpus << " --seed "
       << options.seed << " --start " << index
       << " --count 1 --no-fork --verbose\n"
       << "//        or: mpmd-opt " << path << " --pass-pipeline="
       << shellQuote("builtin.module(" + in.pipeline.elements + ")")
       << (in.pipeline.plan ? " --mpmd-print-execution-plan" : "") << "\n"
       << body;
  } else {
    finding.path = "(could not write " + path + ": " + ec.message() + ")";
  }
  llvm::errs() << "mpmd-fuzz: " << kind << " on input " << index << ": "
               << finding.what << "; replay " << finding.replay << "; saved "
               << finding.path << "\n";
  findings.push_back(std::move(finding));
}

int Parent::run() {
  std::error_code ec = llvm::sys::fs::create_directories(options.crashDir);
  if (ec) {
    llvm::errs() << "mpmd-fuzz: cannot create " << options.crashDir << ": "
                 << ec.message() << "\n";
    return 2;
  }
  const uint64_t begin = nowNs();
  const int64_t end =
      options.count >= 0 ? options.start + options.count : INT64_MAX;
  auto timeUp = [&] {
    return options.seconds >= 0 &&
           (nowNs() - begin) / 1e9 >= options.seconds;
  };
  std::vector<Worker> workers(options.jobs);
  int64_t next = options.start;
  uint64_t lastReport = begin;
  while (true) {
    bool running = false;
    if (timeUp())
      shared->stop = 1;
    for (int w = 0; w < options.jobs; ++w) {
      Worker &worker = workers[w];
      Slot &slot = shared->slots[w];
      if (worker.pid < 0) {
        if (next < end && !shared->stop) {
          int64_t to = std::min(end, next + options.chunk);
          worker.pid = spawn(w, next, to, /*replay=*/false);
          worker.end = to;
          next = to;
        } else {
          continue;
        }
      }
      running = true;
      int status = 0;
      pid_t got = waitpid(worker.pid, &status, WNOHANG);
      if (got == 0) {
        // The start is read before the clock: read after, a worker that
        // just began its next input could have a start later than `now`,
        // and the unsigned difference would look like an hour-long hang.
        int64_t current = slot.current;
        uint64_t started = slot.startNs;
        uint64_t now = nowNs();
        if (current >= 0 && now > started &&
            (now - started) / 1000000 >
                static_cast<uint64_t>(options.timeoutMs)) {
          kill(worker.pid, SIGKILL);
          waitpid(worker.pid, &status, 0);
          worker.pid = -1;
          Slot seen = slot;  // before the replay reuses nothing of it
          record("hang", current,
                 "no progress for " + std::to_string(options.timeoutMs) +
                     " ms",
                 seen);
          ++slot.done;
          if (current + 1 < worker.end && !shared->stop) {
            worker.pid = spawn(w, current + 1, worker.end, false);
          }
        }
        continue;
      }
      worker.pid = -1;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && slot.finished)
        continue;  // the chunk is done (or stopped at the deadline)
      int64_t current = slot.current;
      if (current < 0) {
        llvm::errs() << "mpmd-fuzz: a worker died between inputs: "
                     << describeStatus(status, slot) << "\n";
        findings.push_back({"crash", -1, describeStatus(status, slot) +
                                             " between inputs", "", ""});
        continue;
      }
      std::string what = describeStatus(status, slot);
      std::string kind = WIFEXITED(status) && WEXITSTATUS(status) == 71
                             ? "oom"
                             : "crash";
      record(kind, current, what, slot);
      ++slot.done;
      if (current + 1 < worker.end && !shared->stop)
        worker.pid = spawn(w, current + 1, worker.end, false);
    }
    if (!running && (next >= end || shared->stop))
      break;
    uint64_t now = nowNs();
    if (now - lastReport > 60ULL * 1000000000ULL) {
      lastReport = now;
      uint64_t done = 0;
      for (int w = 0; w < options.jobs; ++w)
        done += shared->slots[w].done;
      llvm::errs() << "mpmd-fuzz: " << done << " inputs after "
                   << static_cast<int64_t>((now - begin) / 1e9) << " s, "
                   << findings.size() << " findings\n";
    }
    usleep(1000);
  }
  summary((nowNs() - begin) / 1e9);
  return findings.empty() ? 0 : 1;
}

void Parent::summary(double seconds) {
  uint64_t outcomes[kNumOutcomes] = {};
  uint64_t digest = 0, done = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> passes;
  for (int w = 0; w < options.jobs; ++w) {
    const Slot &s = shared->slots[w];
    for (int o = 0; o < kNumOutcomes; ++o)
      outcomes[o] += s.outcomes[o];
    digest += s.digest;
    done += s.done;
    for (int p = 0; p < s.numPasses; ++p) {
      passes[s.passes[p].name].first += s.passes[p].ran;
      passes[s.passes[p].name].second += s.passes[p].failed;
    }
  }
  uint64_t crashes = 0, hangs = 0, ooms = 0;
  for (const Finding &f : findings)
    (f.kind == "hang" ? hangs : f.kind == "oom" ? ooms : crashes) += 1;
  uint64_t rejected = outcomes[kParseError] + outcomes[kVerifyError] +
                      outcomes[kBadPipeline] + outcomes[kPassFailed] +
                      outcomes[kPlanFailed];
  uint64_t accepted =
      outcomes[kAccepted] + outcomes[kPlanBuilt] + outcomes[kRoundtripBad];
  llvm::outs() << "mpmd-fuzz: seed " << options.seed << ", inputs "
               << options.start << ".." << options.start + done << ", "
               << corpus.seeds.size() << " seed modules, "
               << (options.freshContext ? "a fresh context per input"
                                        : "one context per worker chunk")
               << "\n";
  llvm::outs() << "  inputs run:           " << done << "\n"
               << "  accepted:             " << accepted
               << " (execution plan built: " << outcomes[kPlanBuilt] << ")\n"
               << "  rejected, diagnosed:  " << rejected << "\n"
               << "    parse errors:       " << outcomes[kParseError] << "\n"
               << "    verifier errors:    " << outcomes[kVerifyError] << "\n"
               << "    bad pipelines:      " << outcomes[kBadPipeline] << "\n"
               << "    pass failures:      " << outcomes[kPassFailed] << "\n"
               << "    plan failures:      " << outcomes[kPlanFailed] << "\n"
               << "  printed result not parsing back: "
               << outcomes[kRoundtripBad]
               << (outcomes[kRoundtripBad]
                       ? " (the first 3 of each worker slot saved as " +
                             options.crashDir + "/roundtrip-*.mlir)"
                       : std::string())
               << "\n"
               << "  crashes:              " << crashes << "\n"
               << "  out of memory:        " << ooms << "\n"
               << "  hangs:                " << hangs
               << " (slow inputs that completed when replayed: " << slowButDone
               << ")\n";
  llvm::outs() << llvm::format("  seconds:              %.1f\n", seconds)
               << llvm::format("  inputs/s:             %.0f\n",
                               seconds > 0 ? done / seconds : 0.0)
               << llvm::format("  outcome digest:       %016llx\n",
                               static_cast<unsigned long long>(digest));
  llvm::outs() << "  passes (runs / failures):\n";
  for (auto &[name, counts] : passes)
    llvm::outs() << "    " << name << ": " << counts.first << " / "
                 << counts.second << "\n";
  if (!signatures.empty())
    llvm::outs() << "  findings by kind (the first " << kKeepPerSignature
                 << " of each are saved and replayed):\n";
  for (auto &[signature, n] : signatures) {
    llvm::outs() << "    " << n << " x " << signature << "\n";
    for (const Finding &f : findings)
      if (!f.path.empty() && f.kind + ": " + f.what == signature)
        llvm::outs() << "      input " << f.index << ": " << f.path
                     << " (replay " << f.replay << ")\n";
  }
  llvm::outs().flush();
}

/// Marks the seeds that parse and verify as they are (in a child, so the
/// context stays pristine and a crashing seed cannot stop the run).
void calibrate(mlir::MLIRContext *context, const Corpus &corpus) {
  fflush(stdout);
  fflush(stderr);
  size_t n = std::min(corpus.seeds.size(), kMaxSeeds);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 2);
      close(devnull);
    }
    for (size_t i = 0; i < n; ++i) {
      mlir::ParserConfig config(context);
      mlir::OwningOpRef<mlir::ModuleOp> module =
          mlir::parseSourceString<mlir::ModuleOp>(corpus.seeds[i].text, config,
                                                  "seed");
      shared->seedValid[i] = module ? 1 : 0;
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  for (size_t i = 0; i < n; ++i)
    if (shared->seedValid[i])
      const_cast<Corpus &>(corpus).validSeeds.push_back(i);
}

} // namespace

int main(int argc, char **argv) {
  FuzzOptions options;
  if (!parseArgs(argc, argv, options))
    return 2;
  mlir::mpmd::registerAllPasses();
  Corpus corpus;
  if (!loadCorpus(options.corpus, corpus))
    return 2;
  if (options.listSeeds) {
    for (const Seed &s : corpus.seeds) {
      llvm::outs() << s.file << "#" << s.chunk << ": " << s.text.size()
                   << " bytes, names [";
      for (const std::string &n : s.names)
        llvm::outs() << n << " ";
      llvm::outs() << "], meshes [";
      for (const std::string &m : s.meshes)
        llvm::outs() << m << " ";
      llvm::outs() << "]\n";
      for (const Pipeline &p : s.runPipelines)
        llvm::outs() << "    RUN: " << p.elements << (p.plan ? " +plan" : "")
                     << "\n";
    }
    llvm::outs() << corpus.seeds.size() << " seeds, " << corpus.opNames.size()
                 << " op names, " << corpus.strings.size() << " strings, "
                 << corpus.lines.size() << " lines\n";
    return 0;
  }

  void *memory = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    perror("mpmd-fuzz: mmap");
    return 2;
  }
  shared = new (memory) Shared();

  // One context with every dialect loaded; each worker inherits it as it
  // is here (copy-on-write), so no worker sees what another one did.
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  installHandler(*context);

  calibrate(context.get(), corpus);

  if (options.noFork) {
    int64_t to = options.count >= 0 ? options.start + options.count
                                    : options.start + 1;
    mySlot = &shared->slots[0];
    options.verbose = true;
    llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
    worker(context.get(), corpus, options, 0, options.start, to, false);
  }
  Parent parent(options, corpus, context.get(), argv[0]);
  return parent.run();
}
