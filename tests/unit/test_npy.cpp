// .npy files: every dtype written and read back bit for bit, headers as numpy.save writes
// them, and the files Temper refuses (Fortran order, big-endian, objects, truncated data)
// named in the error.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "compiler/runtime/npy.h"
#include "user_error_test_util.h"

namespace temper {
namespace {

using testing_util::expect_user_error;

// A version 1.0 file as numpy.save writes it: the header dict padded with spaces to a
// 64-byte boundary and a newline, then the raw data.
std::string numpy_file(const std::string& dict, const std::string& data, int major = 1) {
  size_t prelude = major == 1 ? 10 : 12;
  std::string header = dict + std::string((64 - (prelude + dict.size() + 1) % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prelude - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string raw(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

std::string write_file(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(Npy, EveryDtypeRoundTripsBitForBit) {
  const DataType dtypes[] = {DataType::float16(),
                             DataType::float32(),
                             DataType::float64(),
                             DataType::int8(),
                             DataType::int16(),
                             DataType::int32(),
                             DataType::int64(),
                             DataType::uint8(),
                             DataType(DataType::Code::UInt, 16),
                             DataType(DataType::Code::UInt, 32),
                             DataType(DataType::Code::UInt, 64),
                             DataType::boolean()};
  for (DataType dtype : dtypes) {
    SCOPED_TRACE(dtype.to_string());
    NDArray a = NDArray::random({2, 3, 5}, dtype, 7, -100, 100);
    NDArray b = parse_npy(npy_bytes(a), "round.npy");
    EXPECT_EQ(b.dtype(), dtype);
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
  }
}

TEST(Npy, HeaderIsWhatNumpySaveWrites) {
  NDArray a = NDArray::zeros({2, 3}, DataType::float32());
  for (int i = 0; i < 6; ++i) a.set(i, i);
  std::string expected =
      numpy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", raw({0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(npy_bytes(a), expected);
  EXPECT_EQ(expected.size(), 128u + 24u);  // numpy.save's file for np.arange(6, dtype=np.float32).reshape(2, 3)

  std::string vector = npy_bytes(NDArray::zeros({4}, DataType::boolean()));
  EXPECT_NE(vector.find("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }"), std::string::npos);
  std::string scalar = npy_bytes(NDArray::zeros({}, DataType::float64()));
  EXPECT_NE(scalar.find("'descr': '<f8', 'fortran_order': False, 'shape': (), }"), std::string::npos);
}

TEST(Npy, ReadsScalarsVersionTwoAndOneDimensionalFortranOrder) {
  NDArray scalar = parse_npy(numpy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", raw({2.5f})), "s");
  EXPECT_TRUE(scalar.shape().empty());
  EXPECT_EQ(scalar.get(0), 2.5);

  NDArray v2 =
      parse_npy(numpy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", raw({1, 2, 3}), 2), "v2.npy");
  EXPECT_EQ(v2.shape(), std::vector<int64_t>{3});
  EXPECT_EQ(v2.get(2), 3);

  // One dimension is laid out alike in both orders; numpy writes such arrays with True.
  NDArray f = parse_npy(numpy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", raw({4, 5})), "f");
  EXPECT_EQ(f.get(1), 5);
}

TEST(Npy, WritesAndReadsFiles) {
  std::string path = ::testing::TempDir() + "/temper_test_npy_file.npy";
  NDArray a = NDArray::random({3, 4}, DataType::float32(), 3);
  write_npy(path, a);
  NDArray b = read_npy(path);
  EXPECT_TRUE(compare(b, a, 0, 0).ok());
  std::filesystem::remove(path);
}

TEST(NpyErrors, RefusedFilesAreNamed) {
  std::string f32 = raw({1, 2, 3, 4, 5, 6});
  expect_user_error(
      [&] { parse_npy(numpy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f32), "f.npy"); },
      {"f.npy is in Fortran (column-major) order", "ascontiguousarray"});
  expect_user_error(
      [&] { parse_npy(numpy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", f32), "b.npy"); },
      {"b.npy holds big-endian data (dtype '>f4')", "astype('<f4')"});
  expect_user_error(
      [&] { parse_npy(numpy_file("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", f32), "o.npy"); },
      {"o.npy holds an object array"});
  expect_user_error(
      [&] { parse_npy(numpy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", f32), "c.npy"); },
      {"c.npy has the dtype '<c8', which Temper does not read", "f4"});
  expect_user_error(
      [&] {
        parse_npy(numpy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", f32), "s.npy");
      },
      {"s.npy holds a structured array"});
  expect_user_error(
      [&] { parse_npy(numpy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0), }", ""), "e.npy"); },
      {"e.npy holds an empty array", "no empty tensors"});
  expect_user_error(
      [&] {
        parse_npy(numpy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", raw({1, 2, 3})), "t.npy");
      },
      {"t.npy is truncated", "float32[2, 3] (24 bytes of data) but 12 bytes follow"});
  std::string whole = numpy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32);
  expect_user_error([&] { parse_npy(whole.substr(0, 40), "h.npy"); },
                    {"h.npy is truncated: it ends inside its header"});
  expect_user_error([&] { parse_npy(numpy_file("{'descr': '<f4', 'shape': (2, 3), }", f32), "k.npy"); },
                    {"k.npy is not a valid .npy file", "lacks"});
  expect_user_error([&] { parse_npy("PK\x03\x04 a zip archive, as numpy.savez writes", "z.npz"); },
                    {"z.npz is not a NumPy .npy file"});
}

TEST(NpyErrors, MissingFileAndUnwritableDtype) {
  expect_user_error([] { read_npy("/nonexistent/x.npy"); }, {"cannot read NumPy file '/nonexistent/x.npy'"});
  std::string text = write_file("temper_test_npy_text.npy", "just some text\n");
  expect_user_error([&] { read_npy(text); }, {text, "is not a NumPy .npy file"});
  expect_user_error([] { npy_bytes(NDArray::zeros({2}, DataType(DataType::Code::Int, 4))); },
                    {"cannot write an array of int4 as .npy"});
  expect_user_error([] { write_npy("/nonexistent/dir/y.npy", NDArray::zeros({2}, DataType::float32())); },
                    {"cannot write NumPy file '/nonexistent/dir/y.npy'"});
}

}  // namespace
}  // namespace temper
