// The GEMM-family GPU templates (matmul, batch_matmul, dense; CUDA and OpenCL): TVM's
// tiled GPU matrix product. Each thread block computes a tile of C; each thread a
// register tile of it, accumulated in a "local" buffer; per step of k the block's threads
// copy the A and B tiles into shared memory together and synchronise, and each thread
// then reads its rows of A and columns of B from there.
//
//   tile_y   M split [block, vthread, thread, inner]: blockIdx.y, a virtual-thread loop,
//            threadIdx.y, the register tile's rows
//   tile_x   N split the same way: blockIdx.x, vthread, threadIdx.x, the tile's columns
//   tile_k   K split [outer, inner]: the inner part is the k extent of the shared tiles
//            (the splits are exact, so no loop has a tail; all but the outermost part
//            at most 64)
//   vector   the width of the cooperative fetch's loads and stores: a width of the
//            kind's vector types that divides both tiles' innermost extents
//   vectorize_tile   1: the register tile's columns are one vector (its width a vector
//            width of the kind), so each thread's products, initialisation and
//            write-back are vector operations -- what an OpenCL device on a CPU (PoCL)
//            turns into SIMD instructions
//   auto_unroll_max_step   gpu_tiling.h
//
// batch_matmul's batch loop is bound to blockIdx.z. dense's bias and activation, when it
// has them, are fused into the write-back of each thread's register tile, which they read
// in place of the product's buffer (never written to global memory).
//
// Virtual threads run one after the other in the thread that owns them (split_host_device
// makes their loops serial): a block with vthread factors vy x vx computes vy x vx
// sub-tiles of its tile in turn, staging each one's A and B through shared memory, so
// its threads' outputs lie vthread-strided apart as under TVM's vthread.
//
// A config is valid when the target's limits hold (gpu_tiling.h): threads per block
// ty x tx, shared memory (ty*iy + tx*ix) x tile_k elements, register tile iy x ix. The
// default config is the classic tiling: 8 x 8 threads with a 4 x 4 register tile and a k
// tile of 8, each the largest divisor of the extent up to that (where M allows fewer
// than 8 rows of threads, up to 64 / those along N), no virtual threads, the widest
// vector up to 4 that the tiles allow, and auto_unroll_max_step 512.
#include <algorithm>

#include "schedule_space/gpu_templates.h"
#include "schedule_space/templates/gpu_tiling.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;

constexpr int kMaxFactor = 64;

bool is_batched(const ops::Workload& w) {
  return w.op == "batch_matmul";
}

// A read as [K, M] instead of [M, K]; B read as [N, K] instead of [K, N].
bool a_transposed(const ops::Workload& w) {
  return w.op != "dense" && w.get_bool("transpose_a");
}
bool b_transposed(const ops::Workload& w) {
  return w.op == "dense" || w.get_bool("transpose_b");
}

// The extents of one virtual thread's tiles under config c.
struct GemmTile {
  int64_t ty, iy;                           // the rows of C: threads, register tile
  int64_t tx, ix;                           // the columns
  int64_t k;                                // the k extent of the shared tiles
  int64_t rows() const { return ty * iy; }  // of the A tile
  int64_t cols() const { return tx * ix; }  // of the B tile
};

GemmTile tile_of(const Config& c) {
  std::vector<int64_t> y = c.split("tile_y");
  std::vector<int64_t> x = c.split("tile_x");
  return GemmTile{y[2], y[3], x[2], x[3], c.split("tile_k")[1]};
}

// The innermost (contiguous) extents of the A and B tiles in shared memory.
std::vector<int64_t> innermost_extents(const GemmTile& t, const ops::Workload& w) {
  return {a_transposed(w) ? t.rows() : t.k, b_transposed(w) ? t.k : t.cols()};
}

void define_gemm(ConfigSpace& space, const ops::OpInstance&, const ops::Workload& w, const Target& target) {
  SplitOptions four_way;
  four_way.num_outputs = 4;
  four_way.max_factor = kMaxFactor;
  space.define_split("tile_y", w.get_int("M"), four_way);
  space.define_split("tile_x", w.get_int("N"), four_way);
  SplitOptions two_way;
  two_way.max_factor = kMaxFactor;
  space.define_split("tile_k", w.get_int("K"), two_way);
  std::vector<json> widths;
  for (int64_t v : gpu_vector_widths(target)) widths.emplace_back(v);
  space.define_knob("vector", widths);
  space.define_knob("vectorize_tile", {json(0), json(1)});
  define_auto_unroll(space);

  std::vector<int64_t> lanes = gpu_vector_widths(target);
  space.add_constraint("a vectorized register tile is as wide as a vector of the target", [lanes](const Config& c) {
    int64_t ix = tile_of(c).ix;
    return c.knob_int("vectorize_tile") == 0 || (ix > 1 && std::find(lanes.begin(), lanes.end(), ix) != lanes.end());
  });

  space.add_constraint("the vector width divides the innermost extents of the A and B tiles", [w](const Config& c) {
    int64_t v = c.knob_int("vector");
    for (int64_t e : innermost_extents(tile_of(c), w)) {
      if (e % v != 0) return false;
    }
    return true;
  });
  int64_t bytes = w.dtype().bytes();
  BlockUsage usage;
  usage.threads = [](const Config& c) {
    GemmTile t = tile_of(c);
    return ThreadExtents{t.tx, t.ty, 1};
  };
  usage.shared_bytes = [bytes](const Config& c) {
    GemmTile t = tile_of(c);
    return (t.rows() + t.cols()) * t.k * bytes;
  };
  usage.local_bytes = [bytes](const Config& c) {
    GemmTile t = tile_of(c);
    return t.iy * t.ix * bytes;
  };
  add_limit_constraints(space, target, usage);
}

// The block computing the product: out itself, or the stage dense's epilogue reads.
te::Tensor product_of(const te::Tensor& out) {
  if (out.op()->tag == "reduction") return out;
  for (const te::Tensor& t : out.op()->inputs) {
    if (t.op()->tag == "reduction") return t;
  }
  TEMPER_CHECK(false, "gpu gemm template: ", out.name(), " has no reduction stage");
  return out;
}

Schedule apply_gemm(const Config& c, const ops::OpInstance& op, const ops::Workload& w, const Target&) {
  Schedule s(op.func);
  const std::string& out = op.outputs[0].name();
  const std::string& product = product_of(op.outputs[0]).name();
  BlockRV gemm = s.get_block(product);
  // reads: the accumulator, A, then B.
  BlockRV a_shared = s.cache_read(gemm, 1, "shared");
  BlockRV b_shared = s.cache_read(gemm, 2, "shared");
  BlockRV write_back = s.cache_write(gemm, 0, "local");
  if (product != out) {
    // The epilogue reads the register tile: the product never reaches global memory.
    s.compute_inline(write_back);
    write_back = s.get_block(out);
  }

  std::vector<LoopRV> loops = s.get_loops(gemm);
  bool batched = is_batched(w);
  size_t first = batched ? 1 : 0;
  auto split_by = [&](LoopRV loop, const std::string& knob) {
    std::vector<int64_t> f = c.split(knob);
    return s.split(loop, std::vector<SplitFactor>(f.begin(), f.end()));
  };
  std::vector<LoopRV> y = split_by(loops[first], "tile_y");
  std::vector<LoopRV> x = split_by(loops[first + 1], "tile_x");
  std::vector<LoopRV> k = split_by(loops[first + 2], "tile_k");
  std::vector<LoopRV> order = {y[0], x[0], y[1], x[1], y[2], x[2], k[0], k[1], y[3], x[3]};
  if (batched) order.insert(order.begin(), loops[0]);
  s.reorder(order);
  if (batched) s.bind(loops[0], "blockIdx.z");
  s.bind(y[0], "blockIdx.y");
  s.bind(x[0], "blockIdx.x");
  s.bind(y[1], "vthread");
  s.bind(x[1], "vthread");
  s.bind(y[2], "threadIdx.y");
  s.bind(x[2], "threadIdx.x");

  s.reverse_compute_at(write_back, x[2]);
  BlockRV init = s.decompose_reduction(gemm, k[0]);
  if (c.knob_int("vectorize_tile")) {
    for (BlockRV b : {init, gemm, write_back}) s.vectorize(s.get_loops(b).back());
  }
  GemmTile t = tile_of(c);
  size_t depth = first + 7;  // the loops down to k's outer part
  for (BlockRV stage : {a_shared, b_shared}) {
    s.compute_at(stage, k[0]);
    cooperative_fetch(s, stage, depth, {t.tx, t.ty, 1}, c.knob_int("vector"));
  }
  apply_auto_unroll(s, batched ? loops[0] : y[0], c);
  return s;
}

Config default_gemm(const ConfigSpace& space, const ops::OpInstance&, const ops::Workload& w, const Target&) {
  int64_t k_tile = largest_divisor_up_to(w.get_int("K"), 8);
  std::vector<int64_t> y = default_four_way(w.get_int("M"), 4, 8);
  // Fewer rows of threads (a small M) leave room for more columns: 64 threads in all.
  json knobs = {{"tile_y", y},
                {"tile_x", default_four_way(w.get_int("N"), 4, 64 / y[2])},
                {"tile_k", {w.get_int("K") / k_tile, k_tile}},
                {"vectorize_tile", 0},
                {kAutoUnrollKnob, 512}};
  // The widest vector up to 4 lanes (the widest every kind has) that the tiles allow.
  for (int64_t v : {4, 2, 1}) {
    knobs["vector"] = v;
    if (space.is_valid(space.from_json({{"knobs", knobs}}))) break;
  }
  return space.from_json({{"knobs", knobs}});
}

Template gpu_gemm_template(const std::string& op) {
  return Template{op + ".gpu", define_gemm, apply_gemm, default_gemm};
}

}  // namespace

const Template& gpu_matmul_template() {
  static const Template t = gpu_gemm_template("matmul");
  return t;
}

const Template& gpu_batch_matmul_template() {
  static const Template t = gpu_gemm_template("batch_matmul");
  return t;
}

const Template& gpu_dense_template() {
  static const Template t = gpu_gemm_template("dense");
  return t;
}

}  // namespace temper::schedule_space
