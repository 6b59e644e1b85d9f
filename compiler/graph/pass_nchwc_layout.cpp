#include "compiler/graph/pass_nchwc_layout.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/graph/pass_fold_batch_norm.h"
#include "compiler/graph/shape_inference.h"
#include "compiler/ir/error.h"
#include "compiler/ops/nchwc.h"
#include "compiler/ops/winograd.h"

namespace temper::graph {
namespace {

// Each maps the tail lanes' 0 to a finite value (see the header).
const std::set<std::string> kBlockedUnary = {"Relu",     "Clip",        "Sigmoid",   "Tanh",      "Gelu", "Erf",
                                             "Identity", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu",  "Selu",
                                             "Celu",     "Mish",        "Softsign",  "Neg",       "Abs"};
const std::set<std::string> kBlockedBinary = {"Add", "Sub", "Mul"};
const std::map<std::string, std::string> kBlockedPools = {
    {"MaxPool", "NchwcMaxPool"}, {"AveragePool", "NchwcAveragePool"}, {"GlobalAveragePool", "NchwcGlobalAveragePool"}};

bool is_scalar_constant(const Value& v) {
  return v.constant && v.type.size() == 1;
}

// A grouped conv runs blocked when its groups line up with the blocks (ops/nchwc.h), and
// where a block holds several groups, at most this many: the kernel multiplies the zeros
// between them too.
constexpr int64_t kMaxGroupsPerBlock = 4;

// The conv kind a Conv node takes in the blocked layout of `block` lanes, if any.
std::optional<std::string> blocked_conv_op(const Graph& graph, const Node& node, int64_t block) {
  if (node.op != "Conv" || node.inputs.size() < 2) return std::nullopt;
  const Value& x = graph.value(node.inputs[0]);
  const Value& w = graph.value(node.inputs[1]);
  if (x.type.shape.size() != 4 || x.type.dtype != DataType::float32() || !w.constant) return std::nullopt;
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && !graph.value(node.inputs[2]).constant) {
    return std::nullopt;
  }
  int64_t group = node.attrs.get_int_or("group", 1);
  if (group == 1) return "NchwcConv";
  if (group == x.type.shape[1] && w.type.shape[0] == group) return "NchwcDepthwiseConv";
  int64_t C = x.type.shape[1], K = w.type.shape[0];
  if (ops::nchwc_block_groups(C, K, group, block, block) > 0 && block <= kMaxGroupsPerBlock * (K / group)) {
    return "NchwcConv";
  }
  return std::nullopt;  // other grouped convs, and depthwise with a channel multiplier, stay NCHW
}

// The Winograd tile a conv of this weight, window and output takes (winograd.h), or 0 for
// the direct kernel: 3x3, stride 1, no dilation, and at least 36 tiles, so that each
// transformed weight vector serves enough GEMM rows (the transformed weight is (m+2)^2/9
// times the direct one and cold at each run: on a small map reading it costs more than
// the GEMMs save). F(4x4) where it has the tiles, else F(2x2). Measured in ResNet-18 (2
// threads, AVX-512, each layer between its real neighbours, defaults): 1.15x the direct
// kernel at 56x56 and 1.35x at 28x28 (F(4x4)), 1.25x at 14x14 (F(2x2); F(4x4)'s 16 tiles
// there gained nothing), and a loss at 7x7 with F(2x2)'s 16 tiles, although standalone,
// weights warm, that one ran 1.3x.
int64_t winograd_tile(const std::vector<int64_t>& weight, const detail::ConvWindow2d& window,
                      const TensorType& output) {
  constexpr int64_t kMinTiles = 36;
  if (weight.size() != 4 || weight[2] != 3 || weight[3] != 3) return 0;
  for (int64_t v : window.strides) {
    if (v != 1) return 0;
  }
  for (int64_t v : window.dilations) {
    if (v != 1) return 0;
  }
  const std::vector<int64_t>& y = output.shape;  // [N, K, P, Q]
  for (int64_t m : {4, 2}) {
    if (y[0] * ops::winograd_tiles(y[2], m) * ops::winograd_tiles(y[3], m) >= kMinTiles) return m;
  }
  return 0;
}

class LayoutRewriter {
 public:
  LayoutRewriter(const Graph& graph, int64_t block, bool winograd) : in_(graph), block_(block), winograd_(winograd) {
    out_.name = graph.name;
    out_.opset = graph.opset;
    report_.block = block;
    plain_.assign(graph.values().size(), kNoValue);
    blocked_.assign(graph.values().size(), kNoValue);
    for (ValueId v : graph.inputs()) plain_[v] = out_.add_input(graph.value(v).name, graph.value(v).type);
    for (ValueId v = 0; v < static_cast<ValueId>(graph.values().size()); ++v) {
      if (graph.value(v).constant) plain_[v] = out_.add_constant(graph.value(v).name, *graph.value(v).constant);
    }
    // The input graph's names stay its own: the names this pass makes up avoid them.
    for (const Value& v : graph.values()) value_names_.insert(v.name);
    for (const Node& n : graph.nodes()) node_names_.insert(n.name);
  }

  LayoutReport run(Graph& result) {
    for (const Node& node : in_.nodes()) rewrite(node);
    for (ValueId v : in_.outputs()) out_.mark_output(plain(v, str("output '", in_.value(v).name, "'")));
    infer_types(out_);
    out_.remove_dead();
    out_.verify();
    result = std::move(out_);
    return std::move(report_);
  }

 private:
  const Graph& in_;
  int64_t block_;
  bool winograd_;
  Graph out_;
  LayoutReport report_;
  std::vector<ValueId> plain_;                      // per value of in_: its plain form in out_, if made
  std::vector<ValueId> blocked_;                    // its blocked form, if made
  std::map<std::string, ValueId> packed_;           // packed constants, by name
  std::set<std::string> value_names_, node_names_;  // taken: the input graph's and the made-up ones

  std::string layout_name() const { return str("NCHW", block_, "c"); }

  // base, or base_1, base_2, ... : the first not taken in names, which now takes it.
  static std::string fresh(std::set<std::string>& names, const std::string& base) {
    std::string candidate = base;
    for (int i = 1; names.count(candidate); ++i) candidate = str(base, "_", i);
    names.insert(candidate);
    return candidate;
  }

  int64_t channels(ValueId v) const { return in_.value(v).type.shape[1]; }

  ValueId add_node(const std::string& name, const std::string& op, Attributes attrs, std::vector<ValueId> inputs,
                   const std::string& output) {
    int n = out_.add_node(name, op, std::move(attrs), std::move(inputs), {output});
    return out_.nodes()[n].outputs[0];
  }

  // v's plain form, converted out of the blocked layout for `reader` where needed.
  ValueId plain(ValueId v, const std::string& reader) {
    if (plain_[v] != kNoValue) return plain_[v];
    TEMPER_CHECK(blocked_[v] != kNoValue, "layout pass: value ", in_.value(v).name, " has no form");
    Attributes attrs;
    attrs.set("channels", channels(v));
    // The plain form takes the value's own name: graph outputs and plain readers keep it.
    plain_[v] = add_node(fresh(node_names_, in_.value(v).name + "_to_nchw"), "ReorderFromNchwc", attrs, {blocked_[v]},
                         in_.value(v).name);
    report_.conversions.push_back(str("out of ", layout_name(), " for ", reader));
    return plain_[v];
  }

  // v's blocked form, converted into the blocked layout for `reader` where needed.
  ValueId blocked(ValueId v, const std::string& reader) {
    if (blocked_[v] != kNoValue) return blocked_[v];
    Attributes attrs;
    attrs.set("block", block_);
    blocked_[v] = add_node(fresh(node_names_, in_.value(v).name + "_to_nchwc"), "ReorderToNchwc", attrs, {plain_[v]},
                           fresh(value_names_, in_.value(v).name + "_nchwc"));
    report_.conversions.push_back(str("into ", layout_name(), " for ", reader));
    return blocked_[v];
  }

  ValueId packed_constant(const std::string& name, const std::function<NDArray()>& pack) {
    auto it = packed_.find(name);
    if (it != packed_.end()) return it->second;
    return packed_[name] = out_.add_constant(fresh(value_names_, name), pack());
  }

  void set_blocked_output(const Node& node, ValueId v) { blocked_[node.outputs[0]] = v; }

  void rewrite(const Node& node) {
    std::string reader = str("'", node.name, "' (", node.op, ")");
    if (std::optional<std::string> op = blocked_conv_op(in_, node, block_)) return rewrite_conv(node, *op, reader);
    bool blocked_input = !node.inputs.empty() && node.inputs[0] != kNoValue && blocked_[node.inputs[0]] != kNoValue;
    if (blocked_input && node.outputs.size() == 1) {
      if (kBlockedUnary.count(node.op) && rest_are_scalars(node)) return copy_blocked(node, node.op);
      auto pool = kBlockedPools.find(node.op);
      if (pool != kBlockedPools.end() && pool_is_2d(node)) return copy_blocked(node, pool->second);
    }
    if (kBlockedBinary.count(node.op) && node.inputs.size() == 2 && binary_takes_blocked(node)) {
      return rewrite_binary(node, reader);
    }
    if (node.op == "Concat" && concat_takes_blocked(node)) return rewrite_concat(node, reader);
    if (node.op == "BatchNormalization" && batch_norm_takes_blocked(node)) return rewrite_batch_norm(node);
    copy_plain(node, reader);
  }

  // An inference BatchNormalization that no conv absorbed (DenseNet's after a concat) on a
  // blocked 4-D value, its parameters constants.
  bool batch_norm_takes_blocked(const Node& node) const {
    if (node.inputs.size() != 5 || node.outputs.size() != 1 || node.inputs[0] == kNoValue) return false;
    if (blocked_[node.inputs[0]] == kNoValue || in_.value(node.inputs[0]).type.shape.size() != 4) return false;
    for (size_t i = 1; i < 5; ++i) {
      if (node.inputs[i] == kNoValue || !in_.value(node.inputs[i]).constant) return false;
    }
    return true;
  }

  // BN is a per-channel affine map x * s + t, s = scale / sqrt(var + eps) and t = B - mean
  // * s: a Mul and an Add by blocked constants of shape [1, C/b, 1, 1, b] (0 in the tail
  // lanes), which fuse with the ops around them.
  void rewrite_batch_norm(const Node& node) {
    BatchNormAffine affine = batch_norm_affine(in_, node);
    int64_t C = channels(node.inputs[0]);
    TEMPER_CHECK(static_cast<int64_t>(affine.scale.size()) == C, "layout pass: BatchNormalization '", node.name,
                 "' has ", affine.scale.size(), " parameters for ", C, " channels");
    std::vector<int64_t> blocked_vector = {1, ops::channel_blocks(C, block_), 1, 1, block_};
    NDArray s = NDArray::zeros(blocked_vector, DataType::float32());
    NDArray t = NDArray::zeros(blocked_vector, DataType::float32());
    for (int64_t c = 0; c < C; ++c) {  // channel c sits at flat index c of [1, C/b, 1, 1, b]
      s.set(c, affine.scale[c]);
      t.set(c, affine.shift[c]);
    }
    ValueId scale = packed_constant(str(node.name, "_scale_nchw", block_, "c"), [&] { return s; });
    ValueId shift = packed_constant(str(node.name, "_shift_nchw", block_, "c"), [&] { return t; });
    const std::string& out = in_.value(node.outputs[0]).name;
    ValueId scaled = add_node(fresh(node_names_, node.name + "_scale"), "Mul", {}, {blocked_[node.inputs[0]], scale},
                              fresh(value_names_, out + "_scaled_nchwc"));
    set_blocked_output(node, add_node(node.name, "Add", {}, {scaled, shift}, blocked_name(node)));
  }

  // A concat of 4-D values over their channels, at least one blocked, each of whole
  // blocks (DenseNet's growth of 32, SqueezeNet's fire modules): the blocked values
  // concatenate over their block axis, where the plain form would convert every input
  // out and the result back in.
  bool concat_takes_blocked(const Node& node) const {
    const TensorType& out = in_.value(node.outputs[0]).type;
    if (out.shape.size() != 4 || out.dtype != DataType::float32()) return false;
    int64_t axis = node.attrs.get_int_or("axis", 1);
    if (axis != 1 && axis != -3) return false;
    bool any_blocked = false;
    for (ValueId v : node.inputs) {
      if (v == kNoValue || in_.value(v).type.shape.size() != 4 || channels(v) % block_ != 0) return false;
      any_blocked = any_blocked || blocked_[v] != kNoValue;
    }
    return any_blocked;
  }

  void rewrite_concat(const Node& node, const std::string& reader) {
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(blocked(v, reader));
    Attributes attrs;
    attrs.set("axis", int64_t{1});
    set_blocked_output(node, add_node(node.name, "Concat", attrs, inputs, blocked_name(node)));
  }

  bool rest_are_scalars(const Node& node) const {
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != kNoValue && !is_scalar_constant(in_.value(node.inputs[i]))) return false;
    }
    return true;
  }

  bool pool_is_2d(const Node& node) const { return in_.value(node.inputs[0]).type.shape.size() == 4; }

  // Two 4-D values, at least one blocked; or a blocked value and a scalar.
  bool binary_takes_blocked(const Node& node) const {
    ValueId a = node.inputs[0], b = node.inputs[1];
    if (a == kNoValue || b == kNoValue) return false;
    bool a_blocked = blocked_[a] != kNoValue, b_blocked = blocked_[b] != kNoValue;
    if (!a_blocked && !b_blocked) return false;
    if ((a_blocked && is_scalar_constant(in_.value(b))) || (b_blocked && is_scalar_constant(in_.value(a)))) {
      return true;
    }
    const TensorType& ta = in_.value(a).type;
    const TensorType& tb = in_.value(b).type;
    const TensorType& out = in_.value(node.outputs[0]).type;
    if (ta.shape.size() != 4 || tb.shape.size() != 4 || ta.dtype != tb.dtype || out.shape.size() != 4) return false;
    // One channel count; the other dimensions equal or 1 in one of them, as a
    // squeeze-excite scale [N, C, 1, 1] multiplies its map: the blocked forms then
    // broadcast the same way, block axis against block axis.
    if (ta.shape[1] != tb.shape[1] || out.shape[1] != ta.shape[1]) return false;
    for (int d : {0, 2, 3}) {
      if (ta.shape[d] != tb.shape[d] && ta.shape[d] != 1 && tb.shape[d] != 1) return false;
    }
    return true;
  }

  void rewrite_binary(const Node& node, const std::string& reader) {
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) {
      inputs.push_back(is_scalar_constant(in_.value(v)) ? plain_[v] : blocked(v, reader));
    }
    set_blocked_output(node, add_node(node.name, node.op, node.attrs, inputs, blocked_name(node)));
  }

  std::string blocked_name(const Node& node) { return fresh(value_names_, in_.value(node.outputs[0]).name + "_nchwc"); }

  void copy_blocked(const Node& node, const std::string& op) {
    std::vector<ValueId> inputs = {blocked_[node.inputs[0]]};
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      inputs.push_back(node.inputs[i] == kNoValue ? kNoValue : plain_[node.inputs[i]]);
    }
    Attributes attrs = node.attrs;
    attrs.set("channels", channels(node.inputs[0]));
    set_blocked_output(node, add_node(node.name, op, attrs, inputs, blocked_name(node)));
  }

  void copy_plain(const Node& node, const std::string& reader) {
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? kNoValue : plain(v, reader));
    std::vector<std::string> names;
    for (ValueId v : node.outputs) names.push_back(in_.value(v).name);
    int n = out_.add_node(node.name, node.op, node.attrs, inputs, names);
    for (size_t o = 0; o < node.outputs.size(); ++o) plain_[node.outputs[o]] = out_.nodes()[n].outputs[o];
  }

  void rewrite_conv(const Node& node, std::string op, const std::string& reader) {
    ValueId x = node.inputs[0];
    const Value& w = in_.value(node.inputs[1]);
    bool depthwise = op == "NchwcDepthwiseConv";
    int64_t C = channels(x);
    int64_t groups = depthwise ? 1 : node.attrs.get_int_or("group", 1);
    // A plain input of fewer channels than a block (an RGB image) is read as it is.
    bool read_plain = !depthwise && groups == 1 && blocked_[x] == kNoValue && C < block_;
    ValueId input = read_plain ? plain_[x] : blocked(x, reader);
    int64_t in_block = read_plain ? 1 : block_;
    detail::ConvWindow2d window = detail::conv2d_window(in_, node);
    int64_t tile = read_plain || depthwise || groups > 1 || !winograd_
                       ? 0
                       : winograd_tile(w.type.shape, window, in_.value(node.outputs[0]).type);
    if (tile > 0) op = "NchwcWinogradConv";
    ValueId weight;
    if (tile > 0) {
      weight = packed_constant(str(w.name, "_winograd", tile, "_nchw", block_, "c"),
                               [&] { return ops::pack_winograd_weight_nchwc(*w.constant, tile, block_); });
    } else {
      weight = packed_constant(str(w.name, depthwise ? "_dw" : "", "_nchw", in_block, "c", block_, "c"), [&] {
        return depthwise ? ops::pack_depthwise_weight_nchwc(*w.constant, block_)
                         : ops::pack_conv_weight_nchwc(*w.constant, in_block, block_, groups);
      });
    }
    std::vector<ValueId> inputs = {input, weight};
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      const Value& b = in_.value(node.inputs[2]);
      inputs.push_back(
          packed_constant(str(b.name, "_nchw", block_, "c"), [&] { return ops::block_vector(*b.constant, block_); }));
    }
    Attributes attrs;
    if (tile > 0) {
      attrs.set("tile", tile);
    } else {
      attrs.set("strides", window.strides);
      attrs.set("dilations", window.dilations);
    }
    attrs.set("pads", window.pads);
    attrs.set("in_channels", C);
    attrs.set("channels", in_.value(node.outputs[0]).type.shape[1]);
    if (groups > 1) attrs.set("group", groups);
    set_blocked_output(node, add_node(node.name, op, attrs, inputs, blocked_name(node)));
    ++report_.blocked_convs;
  }
};

}  // namespace

std::string LayoutChoice::to_string() const {
  if (kind == Nchw) return "nchw";
  return str("nchw", block > 0 ? std::to_string(block) : std::string(), "c", kind == BlockedDirect ? "-direct" : "");
}

std::string LayoutChoice::activations() const {
  return block > 0 ? str("NCHW", block, "c") : std::string("NCHW");
}

LayoutChoice parse_layout_choice(const std::string& text) {
  if (text == "nchw") return LayoutChoice::Nchw;
  for (LayoutChoice::Kind kind : {LayoutChoice::Blocked, LayoutChoice::BlockedDirect}) {
    if (text == LayoutChoice(kind).to_string()) return kind;
    for (int64_t block : kNchwcBlocks) {
      if (text == LayoutChoice(kind, block).to_string()) return LayoutChoice(kind, block);
    }
  }
  throw UserError(str("unknown layout '", text,
                      "'; accepted: nchwc (blocked; the block the log chooses, else the target's vector), nchw8c or "
                      "nchw16c (a fixed block), the same with -direct (no Winograd convs), nchw"));
}

int64_t nchwc_block_for(const Target& target, LayoutChoice layout) {
  if (target.is_gpu() || !layout.blocked()) return 0;
  int64_t lanes = target.vector_bits() / 32;
  if (lanes < 4) return 0;
  if (layout.block > 2 * lanes) {
    // The kernels' register tiles hold a block in at most two vectors.
    throw UserError(str("layout ", layout.to_string(), ": a block of ", layout.block, " lanes is more than two of ",
                        target.to_string(), "'s vectors of ", lanes, " float32 lanes; use nchwc (the block ", lanes,
                        ") or a block of at most ", 2 * lanes));
  }
  return layout.block > 0 ? layout.block : lanes;
}

std::vector<int64_t> nchwc_block_candidates(const Target& target, LayoutChoice layout) {
  int64_t block = nchwc_block_for(target, layout);
  if (layout.block > 0 || (block != 8 && block != 16)) return {block};
  return {block, block == 16 ? 8 : 16};
}

LayoutReport convert_to_nchwc(Graph& graph, int64_t block, bool winograd) {
  TEMPER_CHECK(block > 1, "convert_to_nchwc: block ", block);
  bool any = std::any_of(graph.nodes().begin(), graph.nodes().end(),
                         [&](const Node& n) { return blocked_conv_op(graph, n, block).has_value(); });
  if (!any) return LayoutReport{};
  LayoutRewriter rewriter(graph, block, winograd);
  return rewriter.run(graph);
}

}  // namespace temper::graph
