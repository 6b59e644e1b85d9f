#include "cost_model/feature_operations.h"

#include <set>
#include <type_traits>

#include "compiler/ir/functor.h"

namespace temper::cost_model {

namespace {

bool is_float_node(const Node* n) {
  return static_cast<const ExprNode*>(n)->dtype.is_float();
}
int lanes_of(const Node* n) {
  return static_cast<const ExprNode*>(n)->dtype.lanes();
}

// The first operand of a binary node (Add, LT, And, ...), or nullptr for other nodes.
const Expr* binary_first_operand(const Node* n) {
  return dispatch(n, [](const auto* op) -> const Expr* {
    using T = std::decay_t<decltype(*op)>;
    if constexpr (requires { T::kKind; } && std::is_same_v<T, BinaryNode<T::kKind>>) {
      return &op->a;
    } else {
      return nullptr;
    }
  });
}

}  // namespace

void count_operations(const Expr& e, StoreFeatures& row) {
  // A float a + b*c is one multiply-add: its Mul is not counted on its own.
  std::set<const Node*> fused_muls;
  post_order_visit(e, [&](const Node* n) {
    if (n->kind != NodeKind::Add || !is_float_node(n)) return;
    auto* add = static_cast<const AddNode*>(n);
    if (add->b.as<MulNode>()) {
      fused_muls.insert(add->b.get());
    } else if (add->a.as<MulNode>()) {
      fused_muls.insert(add->a.get());
    }
  });
  post_order_visit(e, [&](const Node* n) {
    if (n->kind == NodeKind::Call) {
      if (static_cast<const CallNode*>(n)->call_kind == CallKind::Pure) row.float_math += lanes_of(n);
      return;
    }
    const Expr* first_operand = binary_first_operand(n);
    if (!first_operand && n->kind != NodeKind::Select) return;
    double lanes = lanes_of(n);
    // Comparisons are bool-typed: their operands say whether they compare floats.
    bool on_floats = is_comparison(n->kind) ? first_operand->dtype().is_float() : is_float_node(n);
    if (!on_floats) {
      if (n->kind != NodeKind::And && n->kind != NodeKind::Or) row.int_arith += lanes;
      return;
    }
    switch (n->kind) {
      case NodeKind::Add: {
        auto* add = static_cast<const AddNode*>(n);
        bool fused = fused_muls.count(add->a.get()) || fused_muls.count(add->b.get());
        (fused ? row.float_fma : row.float_add_sub) += lanes;
        break;
      }
      case NodeKind::Sub:
        row.float_add_sub += lanes;
        break;
      case NodeKind::Mul:
        if (!fused_muls.count(n)) row.float_mul += lanes;
        break;
      case NodeKind::Div:
      case NodeKind::Mod:
      case NodeKind::FloorDiv:
      case NodeKind::FloorMod:
        row.float_div += lanes;
        break;
      default:  // comparisons, Min, Max, Select
        row.float_cmp_select += lanes;
        break;
    }
  });
}

}  // namespace temper::cost_model
