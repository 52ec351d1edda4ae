// Units in a stream. A record's attrs `units` is an object from a name to that
// quantity's units in UDUNITS-2 syntax (what CF's `units` attribute takes):
//
//   "units": {"d": "1", "x": "1", "time": "1", "price": "1", "maturity": "year", "rate": "year-1"}
//
// The names are the record's, its table columns', its axes' (x, y, z, time,
// year, strike) and its attrs' time. "1" is a dimensionless number. The tool
// that knows a workload's units writes that workload's whole table on every
// record (StreamWriter::set_units, par::StreamOut::set_units); a reader looks up
// the record's name, a column's or an axis's. A plain string `units` (streams
// written by hand) is the record's own units.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace numpipe {

// The units of `key` by a record's attrs: attrs.units[key] of an object (a
// snapshot "snap_d" falls back to "d"), else a string units when key is the
// record's own name; "" when the attrs do not say.
std::string units_of(const nlohmann::json& attrs, const std::string& key, const std::string& record);

// attrs with `table` (a workload's units) as its units: the record's own object
// entries win over the table's (data carried from elsewhere keep theirs); a
// string units stays the record's where the table has no entry for its name.
// attrs unchanged when the table is empty.
nlohmann::json with_units(const nlohmann::json& attrs, const std::string& record, const nlohmann::json& table);

}  // namespace numpipe
