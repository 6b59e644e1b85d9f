#include "compiler/lower/ir_util.h"

#include "compiler/ir/structural_equal.h"

namespace temper {

std::pair<Expr, Expr> binary_operands(const Expr& e) {
  std::pair<Expr, Expr> r;
  dispatch(e.get(), [&](const auto* op) {
    if constexpr (requires {
                    op->a;
                    op->b;
                  })
      r = {op->a, op->b};
  });
  return r;
}

namespace {
void collect_conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (auto* op = e.as<AndNode>()) {
    collect_conjuncts(op->a, out);
    collect_conjuncts(op->b, out);
  } else {
    out.push_back(e);
  }
}
}  // namespace

std::vector<Expr> split_conjuncts(const Expr& e) {
  std::vector<Expr> out;
  collect_conjuncts(e, out);
  return out;
}

bool reads_buffer(const Expr& e) {
  bool found = false;
  post_order_visit(e, [&](const Node* n) { found = found || n->kind == NodeKind::BufferLoad; });
  return found;
}

bool loads_stored_element(const Expr& e, const BufferStoreNode* store) {
  auto* l = e.as<BufferLoadNode>();
  if (!l || !l->buffer.same_as(store->buffer) || l->indices.size() != store->indices.size()) return false;
  for (size_t i = 0; i < l->indices.size(); ++i) {
    if (!structural_equal(l->indices[i], store->indices[i], /*map_vars=*/false)) return false;
  }
  return true;
}

bool is_const_value(const Expr& e, int64_t v) {
  if (auto* b = e.as<BroadcastNode>()) return is_const_value(b->value, v);
  if (auto* f = e.as<FloatImmNode>()) return f->value == static_cast<double>(v);
  return is_const_int(e, v);
}

Stmt no_op() {
  return evaluate(make_const(DataType::int32(), int64_t{0}));
}

bool is_no_op(const Stmt& s) {
  auto* e = s.as<EvaluateNode>();
  return e && (e->value.as<IntImmNode>() || e->value.as<FloatImmNode>());
}

Stmt mutate_seq_without_no_ops(IRMutator& m, const SeqStmtNode* op, const Stmt& self) {
  std::vector<Stmt> kept;
  bool changed = false;
  for (const Stmt& s : op->seq) {
    Stmt n = m.mutate(s);
    changed = changed || !n.same_as(s);
    if (is_no_op(n)) {
      changed = true;
    } else {
      kept.push_back(n);
    }
  }
  if (!changed) return self;
  return kept.empty() ? no_op() : seq(std::move(kept));
}

}  // namespace temper
