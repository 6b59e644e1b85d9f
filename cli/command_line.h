// Parsing a subcommand's arguments with Boost.Program_options: its options, and the
// positional arguments it takes. Every command parses through here, so --help, errors
// and counts of positionals read the same everywhere.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace temper::cli {

// Parses args against desc (adding --help) and collects the positional arguments (what
// usage calls positional_name), of which there must be between min_positionals and
// max_positionals (-1: no limit). Prints the help and returns false when --help was
// given; UserError (with the usage) for anything malformed.
bool parse_command_line(const std::vector<std::string>& args, const std::string& usage,
                        boost::program_options::options_description& desc, const std::string& positional_name,
                        int min_positionals, int max_positionals, std::vector<std::string>& positionals,
                        boost::program_options::variables_map& vm);

// The common case: exactly one positional WORKLOAD.
bool parse_command_line(const std::vector<std::string>& args, const std::string& usage,
                        boost::program_options::options_description& desc, std::string& workload);

// "name=value" of --input and --dim; UserError naming the flag and the expected form when
// either side is empty.
std::pair<std::string, std::string> split_binding(const std::string& text, const std::string& flag,
                                                  const std::string& form);

// The shape flags of the model commands (run, build, tune): --dim NAME=N sizes the
// dynamic dimension NAME; --shape NAME=D0xD1x... gives input NAME its whole shape, static
// dimensions too (a batch of 8 for a model exported at batch 1).
struct ModelShapeFlags {
  std::vector<std::string> dims, shapes;

  void add_options(boost::program_options::options_description& desc);
  bool given() const { return !dims.empty() || !shapes.empty(); }
  // dim_param name -> size and input name -> shape (ImportOptions::dims, ::input_shapes);
  // UserError for a size that is not a positive integer.
  std::map<std::string, int64_t> dim_sizes() const;
  std::map<std::string, std::vector<int64_t>> input_shapes() const;
};

}  // namespace temper::cli
