// export's view of a stream: named axes with coordinates and labels, and
// variables over them, read from the records by the shared conventions
// (docs/DEVELOPING.md, "Shared conventions"):
//
// - a record's axes are named by attrs `grid.dims` or `dims`, else by the
//   defaults of its workload's kind (fluid [y, x], ns [x, y, z], mle-fit's
//   [series, window], integrate's [policy, year], price's [strike]), else
//   `<record>_dim0`, ...;
// - a record whose attrs `columns` name its last axis is a table: that axis
//   holds named columns (mle-fit's quantiles name theirs by `level_names`, with
//   numeric `levels`);
// - a 1-D record named like its axis is that axis's coordinate (strike,
//   maturity); attrs `grid` (origin, spacing) give x, y, z; a labels record
//   (common/labels.hpp) labels the axis its `labels_of` names;
// - a name written several times is a series along a new first axis: `time`
//   when the records carry attrs `time` or `step` (snapshots), else `group`;
// - units (common/units.hpp) come from attrs `units`: a variable's by its name,
//   a column's by the column's, an axis's by the axis's (time by "time"); labels
//   that are all dates (YYYY-MM-DD, optionally with a time of day) are also a
//   CF time: days since 1970-01-01 on the proleptic Gregorian calendar.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/stream.hpp"

namespace numpipe::exporter {

struct Axis {
  std::string name;
  std::int64_t size = 0;
  std::vector<double> coordinate;   // empty: none (the index stands in)
  std::string coordinate_from;      // "record NAME", "grid", "attrs time", "attrs step", "levels"
  DType coordinate_dtype = DType::f8;
  json coordinate_attrs = json::object();  // units, long_name
  std::string units;                // the coordinate's (common/units.hpp), or "" when unknown
  std::vector<std::string> labels;  // empty: none
  std::string labels_name;          // the labels' column header ("date"), or AXIS_label
  std::vector<double> label_days;   // labels that are all dates: days since 1970-01-01; else empty
};

// Days since 1970-01-01 00:00 (proleptic Gregorian) of "YYYY-MM-DD", optionally
// followed by 'T' or ' ' and "HH:MM" or "HH:MM:SS"; nullopt for any other text.
std::optional<double> parse_date_days(const std::string& text);
inline constexpr const char* kDateUnits = "days since 1970-01-01 00:00:00";
inline constexpr const char* kDateCalendar = "proleptic_gregorian";

struct Variable {
  std::string name;                     // the record's name
  std::vector<const Record*> records;   // one, or a series (one per time or group)
  std::vector<std::string> dims;        // axis names, the series axis first; without a table's column axis
  Shape shape;                          // sizes of dims
  DType dtype = DType::f8;
  json attrs = json::object();          // the record's attrs (a series: those every record shares)
  std::string units;                    // common/units.hpp; "" when the attrs do not say
  std::vector<std::string> column_units;  // a table's: each column's (its own, else the record's)
  bool gridded = false;                 // a field on a grid (left out of CSV tables unless asked for)
  bool coordinate = false;              // the coordinate of the axis it is named like
  // A table record: its last axis holds named columns.
  std::vector<std::string> columns;
  std::vector<double> levels;           // numeric values of the columns (mle-fit's quantile levels), or empty
  std::string level_axis;               // the axis name the levels form in NetCDF ("level")

  bool is_table() const { return !columns.empty(); }
  std::size_t column_count() const { return columns.empty() ? 1 : columns.size(); }
  // Elements over dims (without the column axis).
  std::size_t rows() const;
  // The element at `row` (row-major over dims, the series axis first) and
  // `column` (0 for a plain variable), as double, and as the record's bytes.
  double value(std::size_t row, std::size_t column) const;
  const std::byte* element(std::size_t row, std::size_t column) const;
  // The series' k-th record's attrs value `key`, or null.
};

struct Dataset {
  std::vector<Axis> axes;         // in order of first use
  std::vector<Variable> variables;  // in stream order (first record of each name)
  // The attrs of the data record written last among those with the longest
  // history (the state the stream ends in, not its first snapshot; a table only
  // when there is nothing else), without history.
  json global_attrs = json::object();
  json history = json::array();        // the tools the data passed through

  const Axis* axis(const std::string& name) const;
  const Variable* variable(const std::string& name) const;
};

// Builds the dataset; bad input (exit 2) when records of one name differ in
// shape or dtype, or (strict) when two records give one axis different sizes;
// not strict, the later record's axis takes a new name (y2, y3, ...).
Dataset build_dataset(const std::vector<Record>& records, bool strict = true);

// Shortest text that reads back as the same value of the record's dtype
// (std::to_chars): "0.1", "1e-300", "nan", "inf", "-inf"; integers as integers.
std::string format_number(const std::byte* element, DType dtype);
std::string format_double(double v);

}  // namespace numpipe::exporter
