// A fluid state as stream records (kind "fluid.state"): d, u, v, d0, u0, v0,
// each [n+2, n+2] (C order, first index y), f4 or f8. Shared by fluid-step and
// gen-input fluid.
#pragma once
#include <string>
#include <vector>

#include "common/stream.hpp"
#include "fluid.hpp"

namespace numpipe::fluid {

inline const char* const kFieldNames[6] = {"d", "u", "v", "d0", "u0", "v0"};

struct StateInput {
  int n = 0;                              // nx (the fused solver's N, where nx == ny)
  int nx = 0, ny = 0;                     // interior cells along x (columns) and y (rows)
  DType dtype = DType::f4;
  json attrs = json::object();            // the attrs of record 'd'
  std::vector<const Record*> records;     // d, u, v, d0, u0, v0 (the last of each name)
};

// Finds and checks the six records: present, 2-D [ny+2, nx+2], the same shape, nx, ny >= 16,
// a floating-point dtype (the same for all), every value finite. Bad-input
// errors (exit 2) name the record and the value.
StateInput find_state(const std::vector<Record>& records);

// Converts the six records to fields of T (a square state: nx == ny).
template <class T>
Fields<T> load_fields(const StateInput& in);
// Converts one record of the state's shape to T.
template <class T>
FieldVector<T> record_values(const Record& r);

// Writes fields as records named prefix + d, u, v (and d0, u0, v0 when all_six).
template <class T>
void write_fields(StreamWriter& w, const Fields<T>& f, const json& attrs, const std::string& prefix, bool all_six);

inline constexpr int kMinN = 16;
inline constexpr int kMaxN = 32766;

}  // namespace numpipe::fluid
