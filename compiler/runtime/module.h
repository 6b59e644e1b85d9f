// Compiled code as the rest of Temper sees it: a Module holds functions looked up by
// name; a PackedFunc calls one with the uniform calling convention (c_runtime_api.h).
//
// A PackedFunc keeps what its code lives in (a JIT session, a loaded library) alive, so
// it stays callable after the Module that produced it is gone.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/ndarray.h"

namespace temper {

class PackedFunc {
 public:
  // The calling convention: 0 on success, else nonzero with temper_set_last_error called.
  using Body = std::function<int32_t(const TemperTensor* args, int32_t num_args)>;

  PackedFunc() = default;
  // owner: whatever must outlive calls through fn.
  PackedFunc(std::string name, TemperPackedCFunc fn, std::shared_ptr<const void> owner);
  // A function that is not one C entry point (a GPU function: copies and kernel launches).
  PackedFunc(std::string name, Body body);

  bool defined() const { return static_cast<bool>(fn_); }
  const std::string& name() const { return name_; }

  // Calls the function; throws UserError with the generated code's message when it fails
  // (an argument that does not match, an allocation that failed).
  void operator()(std::span<const TemperTensor> args) const;
  void operator()(const std::vector<NDArray*>& args) const;

 private:
  std::string name_;
  Body fn_;
  std::shared_ptr<const void> owner_;
};

// The exported symbol of the compiled PrimFunc `name`. Prefixed, so that a function named
// like a C library one (an op called "tanh") neither clashes with its declaration in
// generated C nor interposes on it in a loaded library; Module::get_function takes the
// plain name.
std::string function_symbol(const std::string& name);

class Module {
 public:
  virtual ~Module() = default;
  // The function compiled from the PrimFunc of that name; throws UserError if there is none.
  virtual PackedFunc get_function(const std::string& name) = 0;
};

}  // namespace temper
