// dispatch(): a switch over NodeKind that calls a generic lambda with the concrete node.
// Included by ir.h; everything generic over nodes (visitor, mutator, equality, hash)
// goes through here, so the node list is written once.
#pragma once

namespace temper {

template <typename Fn>
decltype(auto) dispatch(const Node* n, Fn&& fn) {
  switch (n->kind) {
#define TEMPER_DISPATCH(name) \
  case NodeKind::name:        \
    return fn(static_cast<const name##Node*>(n));
    TEMPER_EXPR_NODES(TEMPER_DISPATCH)
    TEMPER_STMT_NODES(TEMPER_DISPATCH)
#undef TEMPER_DISPATCH
  }
  TEMPER_CHECK(false, "unknown node kind ", static_cast<int>(n->kind));
  __builtin_unreachable();
}

}  // namespace temper
