#include "compiler/runtime/npy.h"

#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "compiler/ir/error.h"

namespace temper {
namespace {

static_assert(std::endian::native == std::endian::little, ".npy data is read and written in the host's byte order");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// The .npy dtype string ("<f4", "|b1") of a Temper dtype, or "" when .npy has none.
std::string descr_of(DataType dtype) {
  if (!dtype.is_scalar()) return "";
  int bytes = dtype.bytes();
  std::string order = bytes == 1 ? "|" : "<";
  if (dtype.is_bool()) return "|b1";
  if (dtype.is_float() && (bytes == 2 || bytes == 4 || bytes == 8)) return order + "f" + std::to_string(bytes);
  bool integer_width = dtype.bits() == 8 || dtype.bits() == 16 || dtype.bits() == 32 || dtype.bits() == 64;
  if (dtype.is_int() && integer_width) return order + "i" + std::to_string(bytes);
  if (dtype.is_uint() && integer_width) return order + "u" + std::to_string(bytes);
  return "";
}

// Reads the header's Python dict literal, as numpy.lib.format writes it:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
  };

  Header parse() {
    Header h;
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (peek() != '}') {
      std::string key = quoted();
      expect(':');
      if (key == "descr") {
        if (peek() == '[')
          throw UserError(str(source_, " holds a structured array (fields); Temper reads plain arrays"));
        h.descr = quoted();
        has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        has_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        has_shape = true;
      } else {
        throw malformed(str("unexpected key '", key, "'"));
      }
      if (peek() == ',') ++pos_;
    }
    if (!has_descr || !has_order || !has_shape) throw malformed("it lacks 'descr', 'fortran_order' or 'shape'");
    return h;
  }

 private:
  UserError malformed(const std::string& why) const {
    return UserError(str(source_, " is not a valid .npy file: its header ", why));
  }
  char peek() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ >= text_.size()) throw malformed("ends early");
    return text_[pos_];
  }
  void expect(char c) {
    if (peek() != c) throw malformed(str("has '", text_[pos_], "' where '", c, "' belongs"));
    ++pos_;
  }
  std::string quoted() {
    char quote = peek();
    if (quote != '\'' && quote != '"') throw malformed("has an unquoted key or string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) throw malformed("has an unterminated string");
    std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    peek();
    for (const char* word : {"True", "False"}) {
      if (text_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return word[0] == 'T';
      }
    }
    throw malformed("has a 'fortran_order' that is neither True nor False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (peek() != ')') {
      if (!std::isdigit(static_cast<unsigned char>(text_[pos_])))
        throw malformed("has a 'shape' that is not a tuple of sizes");
      int64_t d = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (d > (int64_t{1} << 50)) throw malformed("has a dimension too large for memory");
        d = d * 10 + (text_[pos_++] - '0');
      }
      dims.push_back(d);
      if (peek() == ',') ++pos_;
    }
    ++pos_;
    return dims;
  }

  const std::string& text_;
  const std::string& source_;
  size_t pos_ = 0;
};

// The Temper dtype of a .npy descr; UserError naming the file for what Temper does not hold.
DataType dtype_of(const std::string& descr, const std::string& source) {
  if (descr.size() < 2) throw UserError(str(source, " has the dtype '", descr, "', which is not a NumPy dtype string"));
  char order = descr[0];
  std::string kind_size = descr.substr(1);
  if (kind_size == "O" || kind_size == "O8") {
    throw UserError(str(source, " holds an object array (dtype 'O'); Temper reads numeric and bool arrays only"));
  }
  static const std::pair<const char*, DataType> kTypes[] = {{"f2", DataType::float16()},
                                                            {"f4", DataType::float32()},
                                                            {"f8", DataType::float64()},
                                                            {"i1", DataType::int8()},
                                                            {"i2", DataType::int16()},
                                                            {"i4", DataType::int32()},
                                                            {"i8", DataType::int64()},
                                                            {"u1", DataType::uint8()},
                                                            {"u2", DataType(DataType::Code::UInt, 16)},
                                                            {"u4", DataType(DataType::Code::UInt, 32)},
                                                            {"u8", DataType(DataType::Code::UInt, 64)},
                                                            {"b1", DataType::boolean()}};
  for (const auto& [name, dtype] : kTypes) {
    if (kind_size != name) continue;
    if (order == '>' && dtype.bytes() > 1) {
      throw UserError(str(source, " holds big-endian data (dtype '", descr,
                          "'); save it little-endian, e.g. a.astype('<", kind_size, "')"));
    }
    if (order != '<' && order != '|' && order != '=' && order != '>') break;
    return dtype;
  }
  throw UserError(str(source, " has the dtype '", descr,
                      "', which Temper does not read; it reads f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1"));
}

}  // namespace

NDArray parse_npy(const std::string& bytes, const std::string& source) {
  if (bytes.size() < kMagicSize + 2 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    throw UserError(str(source, " is not a NumPy .npy file (it does not start with \\x93NUMPY)"));
  }
  int major = static_cast<unsigned char>(bytes[kMagicSize]);
  size_t length_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3) {
    throw UserError(str(source, " is .npy format version ", major, ".", static_cast<int>(bytes[kMagicSize + 1]),
                        "; Temper reads versions 1.0 to 3.0"));
  }
  size_t prelude = kMagicSize + 2 + length_bytes;
  if (bytes.size() < prelude) throw UserError(str(source, " is truncated: it ends inside its header"));
  size_t header_length = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    header_length |= static_cast<size_t>(static_cast<unsigned char>(bytes[kMagicSize + 2 + i])) << (8 * i);
  }
  if (bytes.size() < prelude + header_length) throw UserError(str(source, " is truncated: it ends inside its header"));
  std::string header_text = bytes.substr(prelude, header_length);
  HeaderParser::Header header = HeaderParser(header_text, source).parse();

  DataType dtype = dtype_of(header.descr, source);
  int64_t elements = 1;
  for (int64_t d : header.shape) {
    if (d == 0) {
      throw UnsupportedError(str(source, " holds an empty array (shape ", shape_to_string(header.shape),
                                 "); Temper has no empty tensors"));
    }
    if (elements > (int64_t{1} << 50) / d) throw UserError(str(source, " declares an array too large for memory"));
    elements *= d;
  }
  // A Fortran-order array of one dimension (or fewer) is laid out as in C order.
  int non_unit_dims = 0;
  for (int64_t d : header.shape) non_unit_dims += d > 1;
  if (header.fortran_order && non_unit_dims > 1) {
    throw UserError(str(source,
                        " is in Fortran (column-major) order; save it in C order: numpy.save(path, "
                        "numpy.ascontiguousarray(a))"));
  }
  // Checked before allocating: a header may declare far more than the file holds.
  size_t data_bytes = static_cast<size_t>(elements) * static_cast<size_t>(dtype.bytes());
  size_t available = bytes.size() - prelude - header_length;
  if (available < data_bytes) {
    throw UserError(str(source, " is truncated: its header declares ", dtype.to_string(), shape_to_string(header.shape),
                        " (", data_bytes, " bytes of data) but ", available, " bytes follow"));
  }
  NDArray array = NDArray::empty(header.shape, dtype);
  std::memcpy(array.data(), bytes.data() + prelude + header_length, data_bytes);
  return array;
}

NDArray read_npy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UserError(str("cannot read NumPy file '", path, "': no such file or not readable"));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return parse_npy(bytes.str(), path);
}

std::string npy_bytes(const NDArray& array) {
  TEMPER_CHECK(array.defined(), "writing an undefined array as .npy");
  std::string descr = descr_of(array.dtype());
  if (descr.empty())
    throw UserError(str("cannot write an array of ", array.dtype().to_string(), " as .npy: NumPy has no such dtype"));
  std::string shape = "(";
  for (int64_t d : array.shape()) shape += std::to_string(d) + (array.ndim() == 1 ? ",)" : ", ");
  if (array.ndim() != 1) shape = array.ndim() == 0 ? "()" : shape.substr(0, shape.size() - 2) + ")";
  std::string header = str("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");

  // Pad with spaces and end with a newline so that the data starts on a 64-byte boundary.
  auto padded = [&](size_t prelude) {
    size_t total = prelude + header.size() + 1;
    return header + std::string((64 - total % 64) % 64, ' ') + "\n";
  };
  std::string text = padded(kMagicSize + 4);
  int major = 1;
  if (text.size() > 0xffff) {
    major = 2;
    text = padded(kMagicSize + 6);
  }
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(major);
  out += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  out += text;
  out.append(static_cast<const char*>(array.data()), static_cast<size_t>(array.nbytes()));
  return out;
}

void write_npy(const std::string& path, const NDArray& array) {
  std::string bytes = npy_bytes(array);
  std::ofstream file(path, std::ios::binary);
  if (!file) throw UserError(str("cannot write NumPy file '", path, "'"));
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file) throw UserError(str("cannot write NumPy file '", path, "': the write failed"));
}

}  // namespace temper
