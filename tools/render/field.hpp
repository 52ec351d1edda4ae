// render's fields: 2-D images taken from a stream's records (a 2-D array, a
// slice of a 3-D one), or derived from the velocity records (speed |v|, the
// vorticity of a 2-D flow, the vorticity magnitude of a 3-D one), for one
// state or for every snapshot of a series.
#pragma once
#include <string>
#include <vector>

#include "common/stream.hpp"
#include "export/dataset.hpp"

namespace numpipe::render {

struct Field {
  std::string name, units;           // for the title and the colour bar
  std::int64_t rows = 0, cols = 0;   // rows run along y (the vertical axis), cols along x
  std::vector<double> v;             // row-major, row 0 first
  std::string x_name, y_name;        // the axes' names
  std::vector<double> x, y;          // their coordinates (cols and rows values)
  json attrs = json::object();       // the (first) source record's attrs: step, time
};

struct FieldRequest {
  std::string array = "d";           // a record name
  std::string speed_u, speed_v;      // --speed U,V: |(U, V)| of two named records
  std::string derive;                // "", "speed", "vorticity", "vorticity_magnitude"
  std::string slice_axis;            // "" (axis 0), a number or an axis name
  std::int64_t slice_index = -1;     // -1: the middle
  bool interior = false;             // drop the outermost layer
  bool series = false;               // every snapshot (animations, --frames), else the last record
};

// Bad input (exit 2) names the missing record, the wrong shape or the slice.
std::vector<Field> make_fields(const exporter::Dataset& ds, const FieldRequest& request);

// Derivatives by central differences (one-sided at the ends), for tests.
double vorticity_2d_at(const Record& u, const Record& v, std::int64_t row, std::int64_t col, double dy, double dx);

}  // namespace numpipe::render
