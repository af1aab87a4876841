// Text MLIR's parser would crash on is an error (mpmd/Support/ParserGuards.h).
// RUN: not mpmd-opt %s 2>&1 | FileCheck %s

// CHECK: parser_hazards.mlir:[[@LINE+1]]:31: error: a dense array of index type (array<index ...>) is not supported: MLIR's parser crashes on it; use array<i64 ...>
"test.op"() {a = 1 : i64, b = array<index: 1>} : () -> ()

// -----

// Cut short after the element type: still an error, not a crash.
// RUN: printf '"test.op"() {b = array<index' > %t.mlir
// RUN: not mpmd-opt %t.mlir 2>&1 | FileCheck %s --check-prefix=EOF
// EOF: error: a dense array of index type
