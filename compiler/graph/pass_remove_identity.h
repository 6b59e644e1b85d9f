// Identity removal: a graph pass that drops Identity nodes, so that their consumers read
// the Identity's input directly and no kernel copies a tensor. (Dropout, the other no-op
// of inference graphs, is not in the op table: import rejects it.)
//
// A graph output keeps its name, since users fetch outputs by it: when an Identity's
// output is a graph output, the node producing its input writes the output instead (and
// its other consumers read it under that name). An Identity whose input is a graph input,
// a constant or itself a graph output stays, since there is then no producer to rename
// and the output must be a distinct tensor.
//
// Expects a verified graph with inferred types; leaves one (remove_dead has run, so ids
// change).
#pragma once

#include "compiler/graph/graph.h"

namespace temper::graph {

// Returns how many Identity nodes were removed.
int remove_identity(Graph& graph);

}  // namespace temper::graph
