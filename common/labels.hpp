// Text labels that travel with numbers (the dates of a CSV's rows, the names of
// a portfolio's policies): a record of dtype u1 and shape [n, width] holding
// each label's UTF-8 bytes, NUL-padded to the longest one, with attrs
// {"kind": "labels", "labels_of": WHAT, "column": HEADER}. The stream format has
// no string dtype; this keeps labels in the payload (not in a JSON header that
// would grow with n) and readable from NumPy as fixed-width bytes.
#pragma once
#include <string>
#include <vector>

#include "stream.hpp"

namespace numpipe {

inline constexpr const char* kLabelsKind = "labels";

// Makes the record `name` holding `labels`; `labels_of` names what the rows
// label (an axis or a record: "series rows", "window"), `column` the header the
// labels came from ("date"). Bad input when a label holds a NUL byte.
Record make_labels(const std::string& name, const std::vector<std::string>& labels,
                   const std::string& labels_of, const std::string& column);

// True for a record made by make_labels (kind "labels", u1, two dimensions).
bool is_labels(const Record& r);
// The same from a header, for a stream reader's filter (before the payload is read).
bool is_labels(const RecordHeader& h);
// What a labels record's rows label (attrs labels_of), "" when missing or not text.
std::string labels_of(const json& attrs);

// The labels of such a record, trailing NULs removed; bad input otherwise.
std::vector<std::string> read_labels(const Record& r);

}  // namespace numpipe
