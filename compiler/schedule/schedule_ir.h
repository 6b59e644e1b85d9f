// IR queries and rewrites shared by the schedule primitives (internal to
// compiler/schedule/): finding loops and blocks with the statements above them,
// replacing, removing and inserting statements by identity, the function body's
// leading allocations, access regions, and the bounds of an index over loops.
//
// Index arithmetic is the lowering's: simplify() is lower/analyzer.h's (nothing known
// about the variables), and bounds come from its interval analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper::schedule_detail {

// A statement and the statements above it: path.front() is the function body,
// path.back() the statement itself.
struct StmtPath {
  std::vector<Stmt> path;

  const Stmt& stmt() const { return path.back(); }
  // Enclosing loops, outermost first (not counting the statement itself).
  std::vector<const ForNode*> loops() const;
};

struct LoopSite : StmtPath {
  const ForNode* loop() const { return stmt().as<ForNode>(); }
};

struct BlockSite : StmtPath {
  const BlockRealizeNode* realize() const { return stmt().as<BlockRealizeNode>(); }
  const BlockNode* block() const { return realize()->block.as<BlockNode>(); }
};

// Every block under root, in program order.
std::vector<BlockSite> collect_blocks(const Stmt& root);
std::optional<BlockSite> find_block(const Stmt& root, const std::string& name);
std::optional<LoopSite> find_loop(const Stmt& root, const VarNode* loop_var);
bool contains(const Stmt& root, const Stmt& node);

// root with target (found by identity) replaced; an undefined replacement removes target
// from the sequence that holds it. Sequences stay flat.
Stmt replace_stmt(const Stmt& root, const Stmt& target, const Stmt& replacement);
// root with stmt placed just before (or after) target.
Stmt insert_beside(const Stmt& root, const Stmt& target, const Stmt& stmt, bool after);

// Adds an Allocate of b innermost among the body's leading allocations.
Stmt add_allocation(const Stmt& body, const Buffer& b);
// The body without the leading Allocate of b (when nothing uses b any more).
Stmt remove_allocation(const Stmt& body, const Buffer& b);

// The child of the body's top-level sequence that holds node.
Stmt top_level_stmt(const Stmt& body, const Stmt& node);

bool reads_buffer(const BlockNode* block, const Buffer& b);
bool writes_buffer(const BlockNode* block, const Buffer& b);
bool is_param(const PrimFunc& f, const Buffer& b);
// Whether s loads from or stores to b anywhere (also in nested blocks' regions).
bool uses_buffer(const Stmt& s, const Buffer& b);

// One point region per buffer that s loads from (first access, first-use order).
std::vector<BufferRegion> load_regions(const Stmt& s);
// One point region per buffer that s stores to.
std::vector<BufferRegion> store_regions(const Stmt& s);
// Every index tuple at which s loads from (or stores to) b.
std::vector<std::vector<Expr>> load_indices(const Stmt& s, const Buffer& b);
std::vector<std::vector<Expr>> store_indices(const Stmt& s, const Buffer& b);

// s with every access of `from` (loads, stores, regions) redirected to `to`.
Stmt replace_buffer(const Stmt& s, const Buffer& from, const Buffer& to);
std::vector<BufferRegion> replace_buffer(const std::vector<BufferRegion>& regions, const Buffer& from,
                                         const Buffer& to);

// base, or base_1, base_2 ... whichever no block of root is named yet.
std::string unique_block_name(const Stmt& root, const std::string& base);

// A BlockRealize of block.
Stmt realize(std::vector<Expr> iter_values, Expr predicate, const BlockNode& block);
// A nest of serial loops around body: loops[0] outermost.
struct LoopSpec {
  Var var;
  Expr extent;
  Expr min = Expr();  // 0 when undefined
};
Stmt make_loop_nest(const std::vector<LoopSpec>& loops, Stmt body);

// a - b when it simplifies to a constant.
std::optional<int64_t> constant_difference(const Expr& a, const Expr& b);

// Inclusive bounds of an index while `loops` run and every other variable stays fixed,
// in terms of the fixed ones: io*8 + ii over ii in [0, 8) is [io*8, io*8 + 7]. nullopt
// when the index cannot be bounded that way (a term mixing moving and fixed variables
// that the simplifier cannot separate, an unbounded loop).
struct IndexBounds {
  Expr min;
  Expr max;
};
std::optional<IndexBounds> bound_over_loops(const Expr& index, const std::vector<const ForNode*>& loops);

}  // namespace temper::schedule_detail
