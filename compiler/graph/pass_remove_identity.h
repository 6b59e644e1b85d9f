// Identity removal: a graph pass that drops the nodes that pass their input through
// unchanged (Identity, Dropout in inference, a Pad of all-zero pads, which exporters write
// before a pool), so that their consumers read the input directly and no kernel copies a
// tensor.
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

// Returns how many nodes were removed.
int remove_identity(Graph& graph);

}  // namespace temper::graph
