// NumPy's .npy files: how `temper run model.onnx` takes its inputs and gives its outputs.
//
// Read: format versions 1.0, 2.0 and 3.0, little-endian (or byte-order-free) data in C
// order, of the dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1; an array of zero dimensions
// is a scalar. UserError naming the file for anything else: a missing file, a file that
// is not .npy, Fortran order, big-endian data, object arrays and other dtypes, a shape
// with an empty dimension (Temper has no empty tensors), data shorter than the header
// says. Bytes after the data are ignored, as numpy.load ignores them.
//
// Write: version 1.0 (2.0 when the header does not fit 1.0's 16-bit length), C order,
// the header padded so the data starts on a 64-byte boundary, as numpy.save writes it.
#pragma once

#include <string>

#include "compiler/runtime/ndarray.h"

namespace temper {

NDArray read_npy(const std::string& path);
// The same from a file's bytes; source names it in errors.
NDArray parse_npy(const std::string& bytes, const std::string& source);

void write_npy(const std::string& path, const NDArray& array);
// The file's bytes. UserError for a dtype NumPy has none of (int4, handles).
std::string npy_bytes(const NDArray& array);

}  // namespace temper
