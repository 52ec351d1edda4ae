// What gen-input's generators share in writing their streams: the end of a stream,
// and records made row by row in pieces, so that memory is a row and a piece, not
// the record.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/stream.hpp"

namespace numpipe {

// The end record, then the output renamed into place: a generator's last step (its
// exit code).
inline int finish_stream(StreamWriter& writer, OutputFile& out) {
  writer.finish();
  out.commit();
  return 0;
}

// Writes record `name` of shape [n, C] and dtype T in pieces
// (StreamWriter::write_in_pieces): row(i, values) puts row i's C values in `values`,
// called once per row for i = 0, 1, ... in order (a row that straddles two pieces is
// made once). The bytes are those of write() on the whole [n, C] array.
template <class T, std::size_t C, class Row>
void write_rows(StreamWriter& writer, const std::string& name, std::size_t n, const json& attrs, Row row) {
  constexpr std::size_t row_bytes = sizeof(T) * C;
  std::array<T, C> values{};
  std::size_t made = n;  // the row in `values` (n: none yet)
  const Shape shape = {static_cast<std::int64_t>(n), static_cast<std::int64_t>(C)};
  writer.write_in_pieces(name, dtype_of<T>(), shape, attrs, [&](std::uint64_t offset, std::size_t bytes, void* dst) {
    auto* out = static_cast<unsigned char*>(dst);
    for (std::uint64_t at = offset, end = offset + bytes; at < end;) {
      const auto i = static_cast<std::size_t>(at / row_bytes);
      const auto skip = static_cast<std::size_t>(at % row_bytes);
      if (i != made) {
        row(i, values.data());
        made = i;
      }
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(row_bytes - skip, end - at));
      std::memcpy(out + (at - offset), reinterpret_cast<const unsigned char*>(values.data()) + skip, take);
      at += take;
    }
  });
}

// Two columns of equal length as one [n, 2] record of doubles (a table's x and y).
inline void write_pairs(StreamWriter& writer, const std::string& name, const std::vector<double>& x,
                        const std::vector<double>& y, const json& attrs) {
  write_rows<double, 2>(writer, name, x.size(), attrs, [&](std::size_t i, double* v) {
    v[0] = x[i];
    v[1] = y[i];
  });
}

}  // namespace numpipe
