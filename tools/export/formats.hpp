// export's writers: CSV tables, NetCDF-4 (CF conventions) and VTK image data.
#pragma once
#include <string>
#include <vector>

#include "common/stream.hpp"
#include "export/dataset.hpp"

namespace numpipe::exporter {

// ---- CSV --------------------------------------------------------------------------
// The variables of one table: every one's axes lie within `dims`.
struct TableChoice {
  std::vector<std::string> dims;             // the table's axes, row-major (the last varies fastest)
  std::vector<const Variable*> variables;    // in stream order
  std::vector<std::string> left_out;         // variables that do not fit, by name
};

// `names` empty: the table of the variables that are not fields on a grid (or
// of the fields when there is nothing else), the one whose axes hold the most
// variables; else exactly the named variables (bad input when a name is
// unknown or two named variables lie on axes no table holds together).
TableChoice choose_table(const Dataset& ds, const std::vector<std::string>& names);

// One row per point of the table's axes: a column per axis (its coordinate,
// else the index) and its labels where it has them (the time axis of a series
// adds `step`), then the variables (a table record: one column per named
// column). RFC 4180 quoting; numbers in the shortest form that reads back bit
// for bit; LF line ends.
void write_csv(const Dataset& ds, const TableChoice& table, ByteSink& out);
std::string csv_field(const std::string& text);

// ---- NetCDF ---------------------------------------------------------------------
bool netcdf_built();
// Writes every variable to a NetCDF-4 file at `path` (created new): the axes as
// dimensions, coordinate variables, labels as string variables, table records
// as one variable per column (levels as a dimension), zlib level `deflate`;
// `units` on every variable whose units the attrs give, dates as a CF time.
// Reports each record written to the active progress line (common/progress.hpp).
void write_netcdf(const Dataset& ds, const std::string& path, int deflate, const std::string& export_command);

// ---- VTK ---------------------------------------------------------------------------
struct VtkFile {
  std::string path;   // written
  double time = 0;
};
// Writes the 2-D and 3-D fields as VTK XML image data (.vti, appended raw
// binary): the snapshot series to BASE_NNNN.vti plus the collection `path`
// (.pvd), or the final fields to `path` (.vti). Returns the files written.
// Units go in each file's FieldData (a string array "units": "NAME=UNITS").
// A progress line counts the .vti files (on a terminal, unless `quiet`).
// `notes` gathers what was left out.
std::vector<std::string> write_vtk(const Dataset& ds, const std::string& path, std::vector<std::string>& notes, bool quiet);

}  // namespace numpipe::exporter
