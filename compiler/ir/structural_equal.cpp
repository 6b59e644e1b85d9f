#include "compiler/ir/structural_equal.h"

#include <cstring>
#include <unordered_map>

namespace temper {
namespace {

// Records the address of each field of one node, so the same fields of a second node
// of the same type can be compared in step (both walks see the same field sequence).
struct FieldAddresses {
  std::vector<const void*> ptrs;
  template <typename T>
  void operator()(const T& f) { ptrs.push_back(&f); }
};

class EqualChecker {
 public:
  explicit EqualChecker(bool map_vars) : map_vars_(map_vars) {}

  bool eq(const Expr& a, const Expr& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined() || (!map_vars_ && a.same_as(b))) return true;
    if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
    if (auto va = a.as<VarNode>()) return eq_var(va, b.as<VarNode>());
    return eq_node(a.get(), b.get());
  }
  bool eq(const Stmt& a, const Stmt& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined() || (!map_vars_ && a.same_as(b))) return true;
    if (a.kind() != b.kind()) return false;
    return eq_node(a.get(), b.get());
  }
  bool eq(const Var& a, const Var& b) {
    if (a.defined() != b.defined()) return false;
    return !a.defined() || (a.dtype() == b.dtype() && eq_var(a.get(), b.get()));
  }
  bool eq(const Buffer& a, const Buffer& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (!map_vars_) return a.same_as(b);
    auto it = buf_map_.find(a.get());
    if (it != buf_map_.end()) return it->second == b.get();
    if (buf_rev_.count(b.get())) return false;
    if (a->dtype != b->dtype || a->scope != b->scope || !eq(a->shape, b->shape)) return false;
    buf_map_[a.get()] = b.get();
    buf_rev_[b.get()] = a.get();
    return true;
  }
  bool eq(const Range& a, const Range& b) { return eq(a.min, b.min) && eq(a.extent, b.extent); }
  bool eq(const IterVar& a, const IterVar& b) { return a.kind == b.kind && eq(a.var, b.var) && eq(a.dom, b.dom); }
  bool eq(const BufferRegion& a, const BufferRegion& b) { return eq(a.buffer, b.buffer) && eq(a.region, b.region); }
  template <typename T>
  bool eq(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!eq(a[i], b[i])) return false;
    }
    return true;
  }
  bool eq(const double& a, const double& b) { return std::memcmp(&a, &b, sizeof a) == 0; }
  template <typename T>
  bool eq(const T& a, const T& b) { return a == b; }

 private:
  bool map_vars_;
  std::unordered_map<const VarNode*, const VarNode*> var_map_, var_rev_;
  std::unordered_map<const BufferNode*, const BufferNode*> buf_map_, buf_rev_;

  bool eq_var(const VarNode* a, const VarNode* b) {
    if (!b) return false;
    if (!map_vars_) return a == b;
    auto it = var_map_.find(a);
    if (it != var_map_.end()) return it->second == b;
    if (var_rev_.count(b)) return false;
    var_map_[a] = b;
    var_rev_[b] = a;
    return true;
  }

  bool eq_node(const Node* a, const Node* b) {
    return dispatch(a, [&](const auto* na) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(na)>>;
      const T* nb = static_cast<const T*>(b);
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
    });
  }
};

inline void hash_combine(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

class Hasher {
 public:
  size_t h = 0;

  void add(const Expr& e) {
    if (!e.defined()) return hash_combine(h, 0x51);
    if (auto v = e.as<VarNode>()) return add_var(v);
    add_node(e.get());
  }
  void add(const Stmt& s) {
    if (!s.defined()) return hash_combine(h, 0x52);
    add_node(s.get());
  }
  void add(const Var& v) {
    if (!v.defined()) return hash_combine(h, 0x53);
    add_var(v.get());
  }
  void add(const Buffer& b) {
    if (!b.defined()) return hash_combine(h, 0x54);
    auto [it, inserted] = bufs_.emplace(b.get(), bufs_.size());
    hash_combine(h, 0xB0 + it->second);
    if (inserted) {
      add(b->dtype);
      add(b->scope);
      add(b->shape);
    }
  }
  void add(const Range& r) { add(r.min); add(r.extent); }
  void add(const IterVar& iv) { add(static_cast<int>(iv.kind)); add(iv.var); add(iv.dom); }
  void add(const BufferRegion& r) { add(r.buffer); add(r.region); }
  template <typename T>
  void add(const std::vector<T>& v) {
    hash_combine(h, v.size());
    for (const T& x : v) add(x);
  }
  void add(const DataType& t) { hash_combine(h, (static_cast<size_t>(t.code()) << 24) ^ (t.bits() << 12) ^ t.lanes()); }
  void add(const std::string& s) { hash_combine(h, std::hash<std::string>()(s)); }
  void add(const Annotations& a) {
    for (const auto& [k, v] : a) {
      add(k);
      if (auto* i = std::get_if<int64_t>(&v)) {
        hash_combine(h, std::hash<int64_t>()(*i));
      } else {
        add(std::get<std::string>(v));
      }
    }
  }
  void add(const double& d) { hash_combine(h, std::hash<double>()(d)); }
  template <typename T>
  void add(const T& v) {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
    hash_combine(h, std::hash<int64_t>()(static_cast<int64_t>(v)));
  }

 private:
  std::unordered_map<const VarNode*, size_t> vars_;
  std::unordered_map<const BufferNode*, size_t> bufs_;

  void add_var(const VarNode* v) {
    auto [it, inserted] = vars_.emplace(v, vars_.size());
    hash_combine(h, 0x7A0 + it->second);
    add(v->dtype);
  }
  void add_node(const Node* n) {
    hash_combine(h, static_cast<size_t>(n->kind) * 0x100000001b3ULL);
    dispatch(n, [&](const auto* node) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(node)>>;
      if constexpr (std::is_base_of_v<ExprNode, T>) add(node->dtype);
      T::fields(*node, [&](const auto& field) { add(field); });
    });
  }
};

}  // namespace

bool structural_equal(const Expr& a, const Expr& b, bool map_vars) { return EqualChecker(map_vars).eq(a, b); }
bool structural_equal(const Stmt& a, const Stmt& b, bool map_vars) { return EqualChecker(map_vars).eq(a, b); }
bool structural_equal(const PrimFunc& a, const PrimFunc& b) {
  EqualChecker c(/*map_vars=*/true);
  return a.name == b.name && c.eq(a.params, b.params) && c.eq(a.body, b.body);
}

size_t structural_hash(const Expr& e) {
  Hasher h;
  h.add(e);
  return h.h;
}
size_t structural_hash(const Stmt& s) {
  Hasher h;
  h.add(s);
  return h.h;
}
size_t structural_hash(const PrimFunc& f) {
  Hasher h;
  h.add(f.name);
  h.add(f.params);
  h.add(f.body);
  return h.h;
}

}  // namespace temper
