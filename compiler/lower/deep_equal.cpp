#include "compiler/lower/deep_equal.h"

#include <cstring>

namespace temper {
namespace {

// Records the address of each field of one node, so the same fields of a second node
// of the same type can be compared in step.
struct FieldAddresses {
  std::vector<const void*> ptrs;
  template <typename T>
  void operator()(const T& f) {
    ptrs.push_back(&f);
  }
};

bool eq(const Expr& a, const Expr& b);
bool eq(const Stmt& a, const Stmt& b);

bool eq(const Var& a, const Var& b) {
  return a.same_as(b);
}
bool eq(const Buffer& a, const Buffer& b) {
  return a.same_as(b);
}
bool eq(const Range& a, const Range& b) {
  return eq(a.min, b.min) && eq(a.extent, b.extent);
}
bool eq(const IterVar& a, const IterVar& b) {
  return a.kind == b.kind && eq(a.var, b.var) && eq(a.dom, b.dom);
}
bool eq(const BufferRegion& a, const BufferRegion& b);
bool eq(const double& a, const double& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
template <typename T>
bool eq(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!eq(a[i], b[i])) return false;
  }
  return true;
}
template <typename T>
bool eq(const T& a, const T& b) {
  return a == b;
}
bool eq(const BufferRegion& a, const BufferRegion& b) {
  return eq(a.buffer, b.buffer) && eq(a.region, b.region);
}

bool eq_node(const Node* a, const Node* b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  return dispatch(a, [&](const auto* na) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(na)>>;
    const T* nb = static_cast<const T*>(b);
    if constexpr (std::is_same_v<T, VarNode>) {
      return false;  // distinct addresses: distinct variables
    } else {
      if constexpr (std::is_base_of_v<ExprNode, T>) {
        if (na->dtype != nb->dtype) return false;
      }
      FieldAddresses fb;
      T::fields(*nb, fb);
      size_t i = 0;
      bool ok = true;
      T::fields(*na, [&](const auto& field) {
        using F = std::remove_cv_t<std::remove_reference_t<decltype(field)>>;
        if (ok) ok = eq(field, *static_cast<const F*>(fb.ptrs[i]));
        ++i;
      });
      return ok;
    }
  });
}

bool eq(const Expr& a, const Expr& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || eq_node(a.get(), b.get());
}
bool eq(const Stmt& a, const Stmt& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || eq_node(a.get(), b.get());
}

}  // namespace

bool deep_equal(const Expr& a, const Expr& b) {
  return eq(a, b);
}
bool deep_equal(const Stmt& a, const Stmt& b) {
  return eq(a, b);
}

}  // namespace temper
