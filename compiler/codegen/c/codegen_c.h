// The C backend's printer: lowered PrimFuncs (see lowered_func_analysis.h) as one
// readable C translation unit, and the base the CUDA and OpenCL printers subclass.
//
// For each PrimFunc `f` it prints
//   - `static int32_t f_compute(float* restrict A, ..., int32_t n)`: the body, over the
//     buffers' data pointers and the shape variables;
//   - `int32_t f(const TemperTensor* args, int32_t num_args)`: the calling convention of
//     c_runtime_api.h, checking every argument (count, ndim, dtype, shape, compactness,
//     alignment) with messages that name it, then calling f_compute;
//   - per parallel loop, an outlined `static int32_t f_parallel(int64_t iteration, void*)`
//     with a closure struct of the values it uses, run through temper_parallel_for.
//
// Vector values are printed lane by lane: a vector store becomes a loop over its lanes
// (which the C compiler vectorises), a vector LetStmt an array of lanes. float16 is
// _Float16, and every float16 or narrow-integer operation is cast back to its type so
// that results round exactly as in the LLVM backend. Math functions on float16 compute
// in float32. bool buffers hold one byte per element.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/codegen/c/lowered_func_analysis.h"
#include "compiler/ir/ir.h"

namespace temper {

// The C source for funcs; throws UserError when they are not lowered.
std::string emit_c(const std::vector<PrimFunc>& funcs);

class CodeGenC {
 public:
  virtual ~CodeGenC() = default;
  std::string emit(const std::vector<PrimFunc>& funcs);

 protected:
  // ---- hooks for the GPU printers
  virtual void print_includes(std::ostream& os) const;
  // The C spelling of a scalar type of registers (bool is bool) and of buffer elements (bool is uint8_t).
  virtual std::string scalar_type(DataType t) const;
  virtual std::string storage_type(DataType t) const;
  // Qualifier of the functions that hold the compute (a kernel qualifier on GPUs).
  virtual std::string compute_function_qualifier() const { return "static"; }
  virtual std::string restrict_qualifier() const { return "restrict"; }
  // Loops bound to a GPU thread axis; the C backend runs them serially.
  virtual void print_thread_binding_loop(const ForNode* op) { print_serial_loop(op); }
  virtual void print_parallel_loop(const ForNode* op);
  // A store of a vector value; the C backend loops over the lanes.
  virtual void print_vector_store(const BufferStoreNode* op);

  // ---- statements
  void print_stmt(const Stmt& s);
  void print_serial_loop(const ForNode* op);
  void print_allocate(const AllocateNode* op);
  void print_store(const BufferStoreNode* op);
  // Frees the heap buffers live in the current C function and returns -1.
  void print_error_return();
  void line(const std::string& text);

  // ---- vectors, lane by lane
  // The counter of lane loops (one name per PrimFunc).
  const std::string& lane_counter();
  // A vector expression's value at lane lane_counter().
  std::string print_lanes(const Expr& e);
  // for (lane = 0; lane < lanes; ++lane) { statement }
  void print_lane_loop(int lanes, const std::string& statement);

  // ---- expressions (a vector expression prints its lane `lane_`)
  std::string print_expr(const Expr& e);
  std::string print_node(const IntImmNode* op);
  std::string print_node(const FloatImmNode* op);
  std::string print_node(const VarNode* op);
  std::string print_node(const CastNode* op);
  template <NodeKind K>
  std::string print_node(const BinaryNode<K>* op);
  std::string print_node(const NotNode* op);
  std::string print_node(const SelectNode* op);
  std::string print_node(const RampNode* op);
  std::string print_node(const BroadcastNode* op);
  std::string print_node(const LetNode* op);
  std::string print_node(const CallNode* op);
  std::string print_node(const BufferLoadNode* op);
  std::string print_node(const ReduceNode* op);
  std::string print_math_call(const CallNode* op);
  std::string print_extern_call(const CallNode* op);
  std::string element_ref(const Buffer& b, const Expr& index);
  // (T)(text) for the types whose C arithmetic would not round to T by itself.
  std::string rounded(DataType t, const std::string& text) const;
  std::string helper(const std::string& op, DataType t);
  std::string literal(DataType t, double value) const;
  std::string literal(DataType t, int64_t value) const;

  // ---- functions
  void print_function(const PrimFunc& f);
  void print_wrapper(const PrimFunc& f, const ShapeBinding& binding, const std::string& compute_name);
  std::string pointer_decl(const Buffer& b);
  std::string aligned_pointer(const Buffer& b, const std::string& value);

  // ---- names
  // A C identifier for an IR object, unique within the current PrimFunc (and its outlined parts).
  std::string name_of(const Var& v);
  std::string name_of(const Buffer& b);
  // The C name of one binding (LetStmt, Let, loop, Allocate) of a Var or buffer, for
  // the binding's scope. The IR may bind one Var twice (in copies of a statement); C wants
  // one declaration per name in a block, so a second binding gets a new name, and the
  // name it hid comes back when its scope ends.
  class ScopedName {
   public:
    ScopedName(CodeGenC& printer, const void* key, const std::string& base);
    ScopedName(CodeGenC& printer, const Var& v) : ScopedName(printer, v.get(), v.name()) {}
    ScopedName(CodeGenC& printer, const Buffer& b) : ScopedName(printer, b.get(), b->name) {}
    ~ScopedName();
    ScopedName(const ScopedName&) = delete;
    ScopedName& operator=(const ScopedName&) = delete;
    const std::string& name() const { return name_; }

   private:
    CodeGenC& printer_;
    const void* key_;
    std::string name_;
    std::optional<std::string> hidden_;
  };
  std::string fresh_local(const std::string& base);
  std::string fresh_global(const std::string& base);

  // The C function being printed: its text and the heap buffers live at this point.
  struct FunctionText {
    std::ostringstream body;
    int indent = 1;
    std::vector<std::string> heap_buffers;
  };
  FunctionText* fn_ = nullptr;

  std::string func_name_;
  std::vector<std::string> definitions_;        // functions and closure types, in order
  std::map<std::string, std::string> helpers_;  // name -> definition
  std::map<std::string, std::string> externs_;  // name -> prototype
  std::set<std::string> global_names_;
  std::map<const void*, std::string> local_names_;
  std::set<const void*> declared_;
  std::set<std::string> used_local_names_;
  std::set<const VarNode*> lane_arrays_;  // vector Vars held as arrays of lanes
  std::string lane_;                      // the lane being printed; empty outside vector code
  std::string lane_counter_;              // the name of the lane loop's counter in this PrimFunc
};

}  // namespace temper
