#include "labels.hpp"

#include <algorithm>
#include <cstring>

namespace numpipe {

Record make_labels(const std::string& name, const std::vector<std::string>& labels, const std::string& labels_of,
                   const std::string& column) {
  std::size_t width = 1;  // a zero-width array would lose the row count in some readers
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].find('\0') != std::string::npos)
      fail_input("label " + std::to_string(i) + " of '" + column + "' holds a NUL byte");
    width = std::max(width, labels[i].size());
  }
  Record r = Record::make(name, DType::u1, {static_cast<std::int64_t>(labels.size()), static_cast<std::int64_t>(width)},
                          {{"kind", kLabelsKind}, {"labels_of", labels_of}, {"column", column}});
  auto* bytes = r.data<std::uint8_t>();
  std::memset(bytes, 0, r.payload.bytes());
  for (std::size_t i = 0; i < labels.size(); ++i) std::memcpy(bytes + i * width, labels[i].data(), labels[i].size());
  return r;
}

namespace {
// An attribute's text, "" when it is missing or not a string (json's value()
// would throw on a number: bad input, not an internal error).
std::string string_attr(const json& attrs, const char* key) {
  if (!attrs.is_object()) return {};
  const auto it = attrs.find(key);
  return it != attrs.end() && it->is_string() ? it->get<std::string>() : std::string();
}
bool labels_layout(DType dtype, const Shape& shape, const json& attrs) {
  return dtype == DType::u1 && shape.size() == 2 && string_attr(attrs, "kind") == kLabelsKind;
}
}  // namespace

bool is_labels(const Record& r) { return labels_layout(r.dtype, r.shape, r.attrs); }
bool is_labels(const RecordHeader& h) { return labels_layout(h.dtype, h.shape, h.attrs); }
std::string labels_of(const json& attrs) { return string_attr(attrs, "labels_of"); }

std::vector<std::string> read_labels(const Record& r) {
  if (!is_labels(r))
    fail_input("record '" + r.name + "' is not a labels record (u1 [n, width] with attrs kind \"labels\")");
  const std::size_t n = static_cast<std::size_t>(r.shape[0]), width = static_cast<std::size_t>(r.shape[1]);
  const auto* bytes = r.data<std::uint8_t>();
  std::vector<std::string> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const char* row = reinterpret_cast<const char*>(bytes + i * width);
    out[i].assign(row, strnlen(row, width));
  }
  return out;
}

}  // namespace numpipe
