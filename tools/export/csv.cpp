#include <algorithm>
#include <set>

#include "common/progress.hpp"
#include "export/formats.hpp"

namespace numpipe::exporter {
namespace {

bool within(const std::vector<std::string>& inner, const std::vector<std::string>& outer) {
  for (const auto& d : inner)
    if (std::find(outer.begin(), outer.end(), d) == outer.end()) return false;
  return true;
}

// Integral coordinates (indices, steps, years) print as integers.
std::string format_coordinate(double v, DType dtype) {
  switch (dtype) {
    case DType::f4: {
      const float f = static_cast<float>(v);
      return format_number(reinterpret_cast<const std::byte*>(&f), DType::f4);
    }
    case DType::f8: return format_double(v);
    default: {
      const auto i = static_cast<std::int64_t>(v);
      return format_number(reinterpret_cast<const std::byte*>(&i), DType::i8);
    }
  }
}

}  // namespace

std::string csv_field(const std::string& text) {
  const bool quote = text.find_first_of(",\"\r\n") != std::string::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' ' || text.front() == '\t'));
  if (!quote) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

TableChoice choose_table(const Dataset& ds, const std::vector<std::string>& names) {
  TableChoice t;
  std::vector<const Variable*> pool;
  if (!names.empty()) {
    for (const auto& n : names) {
      const Variable* v = ds.variable(n);
      if (!v) {
        std::string list;
        for (const auto& x : ds.variables) list += (list.empty() ? "" : ", ") + x.name;
        fail_input("--records: no record '" + n + "' in the stream (records: " + list + ")");
      }
      pool.push_back(v);
    }
  } else {
    for (const auto& v : ds.variables)
      if (!v.coordinate && !v.gridded) pool.push_back(&v);
    // Fields on a grid are not a spreadsheet: left out, and named (nps-export says so on stderr).
    if (!pool.empty())
      for (const auto& v : ds.variables)
        if (!v.coordinate && v.gridded) t.left_out.push_back(v.name);
    if (pool.empty())
      for (const auto& v : ds.variables)
        if (!v.coordinate) pool.push_back(&v);
    if (pool.empty())  // only coordinates (a lone strike list): they are the table
      for (const auto& v : ds.variables) pool.push_back(&v);
  }
  if (pool.empty()) fail_input("the stream holds no numeric records to export");
  // Candidate axes: each variable's; the one holding the most variables wins
  // (the first on a tie), and a larger set of axes beats its subsets.
  std::size_t best = 0, best_count = 0;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    std::size_t count = 0;
    for (const Variable* v : pool) count += within(v->dims, pool[i]->dims);
    const bool wider = count == best_count && pool[i]->dims.size() > pool[best]->dims.size();
    if (count > best_count || wider) best = i, best_count = count;
  }
  t.dims = pool[best]->dims;
  for (const Variable* v : pool) {
    if (within(v->dims, t.dims)) t.variables.push_back(v);
    else t.left_out.push_back(v->name);
  }
  if (!names.empty() && !t.left_out.empty()) {  // (names given: no grid field was left out above)
    auto dims_text = [](const std::vector<std::string>& d) {
      std::string s;
      for (const auto& x : d) s += (s.empty() ? "" : ", ") + x;
      return "[" + s + "]";
    };
    const Variable* out = ds.variable(t.left_out.front());
    fail_input("--records: '" + out->name + "' lies on axes " + dims_text(out->dims) + " and '" + pool[best]->name +
               "' on " + dims_text(t.dims) + ": no one table holds both; export them one at a time");
  }
  // A coordinate is its axis's column already (unless it is all there is).
  const bool data = std::any_of(t.variables.begin(), t.variables.end(), [](const Variable* v) { return !v->coordinate; });
  if (data)
    t.variables.erase(std::remove_if(t.variables.begin(), t.variables.end(), [](const Variable* v) { return v->coordinate; }),
                      t.variables.end());
  return t;
}

void write_csv(const Dataset& ds, const TableChoice& table, ByteSink& out) {
  std::vector<std::string> header;
  std::set<std::string> used;
  auto unique = [&](std::string name, const std::string& prefix) {
    if (used.count(name)) name = prefix + "_" + name;
    while (used.count(name)) name += "_";
    used.insert(name);
    return name;
  };
  struct AxisColumns {
    const Axis* axis;
    bool steps;
  };
  std::vector<AxisColumns> axes;
  std::vector<std::vector<double>> steps_of;
  // A column's units follow its name in brackets, "u [m s-1]" (docs/export.md).
  std::vector<std::string> units_of_column;
  auto with_units = [](const std::string& column, const std::string& units) {
    return units.empty() ? column : column + " [" + units + "]";
  };
  for (const auto& d : table.dims) {
    const Axis* a = ds.axis(d);
    const bool steps = a->coordinate_attrs.contains("steps");
    axes.push_back({a, steps});
    header.push_back(unique(a->name, "axis"));
    units_of_column.push_back(a->coordinate.empty() ? "" : a->units);
    if (steps) header.push_back(unique("step", a->name)), units_of_column.push_back("1");
    if (!a->labels.empty()) units_of_column.push_back("");
    if (!a->labels.empty()) header.push_back(unique(a->labels_name, a->name));
    steps_of.push_back(steps ? a->coordinate_attrs["steps"].get<std::vector<double>>() : std::vector<double>());
  }
  // A table record's columns keep their names unless one of them is also the
  // name of another column here (stderr's "theta" beside the estimate theta):
  // then all of that record's columns are prefixed with its name.
  std::set<std::string> others = used;
  for (const Variable* v : table.variables)
    if (!v->is_table()) others.insert(v->name);
  std::set<const Variable*> prefixed;
  for (const Variable* v : table.variables) {
    if (!v->is_table()) continue;
    for (const auto& c : v->columns) {
      bool clash = others.count(c) > 0;
      for (const Variable* w : table.variables)
        if (w != v && w->is_table()) clash = clash || std::find(w->columns.begin(), w->columns.end(), c) != w->columns.end();
      if (clash) prefixed.insert(v);
    }
  }
  // Each variable's row index from the table's multi-index.
  std::vector<std::vector<std::size_t>> position;  // per variable: the table axis of each of its dims
  for (const Variable* v : table.variables) {
    std::vector<std::size_t> pos;
    for (const auto& d : v->dims)
      pos.push_back(static_cast<std::size_t>(std::find(table.dims.begin(), table.dims.end(), d) - table.dims.begin()));
    position.push_back(pos);
    if (v->is_table()) {
      for (const auto& c : v->columns) header.push_back(unique(prefixed.count(v) ? v->name + "_" + c : c, v->name));
      units_of_column.insert(units_of_column.end(), v->column_units.begin(), v->column_units.end());
    } else {
      header.push_back(unique(v->name, "value"));
      units_of_column.push_back(v->units);
    }
  }
  std::string line;
  for (std::size_t i = 0; i < header.size(); ++i)
    line += (i ? "," : "") + csv_field(with_units(header[i], units_of_column[i]));
  line += "\n";
  out.write(line.data(), line.size());

  std::vector<std::int64_t> sizes;
  std::size_t rows = 1;
  for (const auto& a : axes) {
    sizes.push_back(a.axis->size);
    rows *= static_cast<std::size_t>(a.axis->size);
  }
  std::vector<std::int64_t> index(sizes.size(), 0);
  std::string buffer;
  for (std::size_t r = 0; r < rows; ++r) {
    line.clear();
    bool first = true;
    auto put = [&](const std::string& s) {
      if (!first) line += ',';
      line += s;
      first = false;
    };
    for (std::size_t k = 0; k < axes.size(); ++k) {
      const Axis& a = *axes[k].axis;
      const auto i = static_cast<std::size_t>(index[k]);
      put(a.coordinate.empty() ? std::to_string(i) : format_coordinate(a.coordinate[i], a.coordinate_dtype));
      if (axes[k].steps) put(format_coordinate(steps_of[k][i], DType::i8));
      if (!a.labels.empty()) put(csv_field(a.labels[i]));
    }
    for (std::size_t j = 0; j < table.variables.size(); ++j) {
      const Variable& v = *table.variables[j];
      std::size_t row = 0;
      for (std::size_t d = 0; d < v.dims.size(); ++d)
        row = row * static_cast<std::size_t>(v.shape[d]) + static_cast<std::size_t>(index[position[j][d]]);
      for (std::size_t c = 0; c < v.column_count(); ++c) put(format_number(v.element(row, c), v.dtype));
    }
    line += '\n';
    buffer += line;
    if (buffer.size() > (1u << 20)) {
      out.write(buffer.data(), buffer.size());
      buffer.clear();
      if (auto* p = active_progress()) p->update(r + 1);  // nps-export's line, in rows
    }
    for (std::size_t k = sizes.size(); k-- > 0;) {
      if (++index[k] < sizes[k]) break;
      index[k] = 0;
    }
  }
  out.write(buffer.data(), buffer.size());
}

}  // namespace numpipe::exporter
