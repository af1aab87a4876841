//===- Options.cpp - Textual forms of the optimize options ----------------===//

#include "mpmd/Transforms/Optimize/Options.h"

using namespace mlir;
using namespace mlir::mpmd;

std::optional<MeshOrder> MeshOrder::parse(StringRef text, std::string &error) {
  auto [target, keys] = text.split('=');
  auto [mesh, loop] = target.split('@');
  if (mesh.empty() || !text.contains('=') ||
      (target.contains('@') && loop.empty())) {
    error = ("invalid schedule order entry '" + text +
             "': expected MESH=KEY|KEY|... or MESH@LOOP=KEY|KEY|...")
                .str();
    return std::nullopt;
  }
  MeshOrder order{mesh.str(), {}, loop.str()};
  SmallVector<StringRef> parts;
  keys.split(parts, '|', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef key : parts)
    order.keys.push_back(key.str());
  return order;
}

raw_ostream &mlir::mpmd::operator<<(raw_ostream &os, const MeshOrder &order) {
  os << order.mesh;
  if (!order.loop.empty())
    os << "@" << order.loop;
  os << "=";
  llvm::interleave(order.keys, os, "|");
  return os;
}

std::optional<MergeRule> MergeRule::parse(StringRef text, std::string &error) {
  auto [first, second] = text.split(':');
  if (first.empty() || second.empty() || !text.contains(':')) {
    error = ("invalid merge rule '" + text +
             "': expected LABEL:LABEL, e.g. layer3:layer3(1)")
                .str();
    return std::nullopt;
  }
  return MergeRule{first.str(), second.str()};
}

raw_ostream &mlir::mpmd::operator<<(raw_ostream &os, const MergeRule &rule) {
  return os << rule.first << ":" << rule.second;
}
