#include "export/dataset.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <type_traits>

#include "common/dtype.hpp"
#include "common/labels.hpp"
#include "common/units.hpp"

namespace numpipe::exporter {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<std::vector<std::string>> string_list(const json& attrs, const char* key) {
  if (!attrs.is_object()) return std::nullopt;
  auto it = attrs.find(key);
  if (it == attrs.end() || !it->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string()) return std::nullopt;
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::optional<std::vector<double>> number_list(const json& value) {
  if (!value.is_array()) return std::nullopt;
  std::vector<double> out;
  for (const auto& v : value) {
    if (!v.is_number()) return std::nullopt;
    out.push_back(v.get<double>());
  }
  return out;
}

std::string kind_of(const Record& r) {
  if (r.attrs.is_object())
    if (auto it = r.attrs.find("kind"); it != r.attrs.end() && it->is_string()) return it->get<std::string>();
  return "";
}

// The names of a record's axes (all of them, the column axis included).
std::vector<std::string> axis_names(const Record& r, bool table) {
  const std::size_t ndim = r.shape.size();
  if (r.attrs.is_object()) {
    if (auto g = r.attrs.find("grid"); g != r.attrs.end() && g->is_object())
      if (auto d = string_list(*g, "dims"); d && d->size() == ndim) return *d;
    if (auto d = string_list(r.attrs, "dims")) {
      if (d->size() == ndim) return *d;
      if (table && d->size() + 1 == ndim) {
        d->push_back("column");
        return *d;
      }
    }
  }
  const std::string kind = kind_of(r), &name = r.name;
  if (starts_with(kind, "fluid.") && ndim == 2 && !table) return {"y", "x"};
  if (starts_with(kind, "ns.") && ndim == 3) return {"x", "y", "z"};
  if (kind == "mle.series" && name == "x") {
    if (ndim == 2) return {"series", "point"};
    if (ndim == 1) return {"point"};
  }
  if (kind == "mle.fit") {
    // [series, window, ...] where the second axis has the fit's window count (attrs "windows").
    const bool by_window = ndim >= 2 && r.attrs.is_object() && r.attrs.value("windows", std::int64_t{-1}) == r.shape[1];
    if (name == "start" && ndim == 1) return {"window"};
    if (ndim == 2 && by_window) return {"series", "window"};
    if (ndim == 3 && by_window) return {"series", "window", table ? "column" : "level"};
    if (ndim == 3 && table) return {"series", name + "_row", "column"};  // backtest: [series, level, column]
  }
  if (starts_with(kind, "integrate.")) {
    if (name == "reserve" && ndim == 2) return {"policy", "year"};
    if (name == "reserve0" && ndim == 1) return {"policy"};
    if ((name == "policies" || name == "steps") && ndim == 2) return {"policy", "column"};
    if (name == "curve" && ndim == 2) return {"curve_point", "column"};
  }
  if (starts_with(kind, "price") && name == "price" && ndim == 1) return {"strike"};
  std::vector<std::string> out;
  if (table) {
    if (ndim == 2) out.push_back(name + "_row");
    else
      for (std::size_t i = 0; i + 1 < ndim; ++i) out.push_back(name + "_dim" + std::to_string(i));
    out.push_back("column");
    return out;
  }
  for (std::size_t i = 0; i < ndim; ++i) out.push_back(name + "_dim" + std::to_string(i));
  return out;
}

bool numeric_attr(const Record& r, const char* key) {
  return r.attrs.is_object() && r.attrs.contains(key) && r.attrs[key].is_number();
}

}  // namespace

std::size_t Variable::rows() const {
  std::size_t n = 1;
  for (auto s : shape) n *= static_cast<std::size_t>(s);
  return n;
}

const std::byte* Variable::element(std::size_t row, std::size_t column) const {
  const std::size_t per_record = records.size() > 1 ? rows() / records.size() : rows();
  const std::size_t k = records.size() > 1 ? row / per_record : 0;
  const std::size_t index = (row % per_record) * column_count() + column;
  return records[k]->payload.data() + index * dtype_size(dtype);
}

double Variable::value(std::size_t row, std::size_t column) const {
  return element_as_double(dtype, element(row, column));
}

const Axis* Dataset::axis(const std::string& name) const {
  for (const auto& a : axes)
    if (a.name == name) return &a;
  return nullptr;
}

const Variable* Dataset::variable(const std::string& name) const {
  for (const auto& v : variables)
    if (v.name == name) return &v;
  return nullptr;
}

Dataset build_dataset(const std::vector<Record>& records, bool strict) {
  Dataset ds;
  std::vector<const Record*> labels;
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Record*>> by_name;
  for (const auto& r : records) {
    if (is_labels(r)) {
      labels.push_back(&r);
      continue;
    }
    if (!by_name.count(r.name)) order.push_back(r.name);
    by_name[r.name].push_back(&r);
  }

  // Axes: the first record that names one sets its size; later ones must agree.
  std::map<std::string, std::string> axis_owner;
  auto use_axis = [&](const std::string& name, std::int64_t size, const std::string& record) -> Axis& {
    for (auto& a : ds.axes)
      if (a.name == name) {
        if (a.size != size)
          fail_input("record '" + record + "' gives axis '" + name + "' " + std::to_string(size) + " points but '" +
                     axis_owner[name] + "' gave it " + std::to_string(a.size));
        return a;
      }
    axis_owner[name] = record;
    ds.axes.push_back({});
    ds.axes.back().name = name;
    ds.axes.back().size = size;
    return ds.axes.back();
  };

  for (const auto& name : order) {
    const auto& group = by_name[name];
    const Record& first = *group.front();
    for (const Record* r : group)
      if (r->shape != first.shape || r->dtype != first.dtype)
        fail_input("records '" + name + "' differ across the stream: " + dtype_name(first.dtype) + " " +
                   shape_string(first.shape) + " and " + dtype_name(r->dtype) + " " + shape_string(r->shape) +
                   " (export takes a series of one shape)");
    Variable v;
    v.name = name;
    v.records = group;
    v.dtype = first.dtype;
    v.attrs = first.attrs.is_object() ? first.attrs : json::object();
    // A series' own attrs are those its records share (a snapshot's step and time are the time axis).
    for (const Record* r : group)
      for (auto it = v.attrs.begin(); it != v.attrs.end();) {
        if (!r->attrs.is_object() || !r->attrs.contains(it.key()) || r->attrs[it.key()] != it.value()) it = v.attrs.erase(it);
        else ++it;
      }
    v.units = units_of(first.attrs, name, name);
    const std::size_t ndim = first.shape.size();
    if (ndim >= 1) {
      const auto last = static_cast<std::size_t>(first.shape.back());
      if (auto c = string_list(v.attrs, "columns"); c && c->size() == last && last > 0) {
        v.columns = *c;
        for (const auto& c_name : v.columns) {
          const std::string u = units_of(first.attrs, c_name, name);
          v.column_units.push_back(u.empty() ? v.units : u);
        }
      } else if (auto l = string_list(v.attrs, "level_names"); l && l->size() == last && last > 0) {
        v.columns.clear();
        for (const auto& s : *l) v.columns.push_back(name + "_" + s);
        v.column_units.assign(v.columns.size(), v.units);
        if (auto lv = number_list(v.attrs.value("levels", json())); lv && lv->size() == last) v.levels = *lv;
      }
    }
    std::vector<std::string> names = axis_names(first, v.is_table());
    if (!strict)  // a clash gets the axis a new name
      for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string base = names[i];
        for (int k = 2; ds.axis(names[i]) && ds.axis(names[i])->size != first.shape[i]; ++k)
          names[i] = base + std::to_string(k);
      }
    if (v.is_table()) {
      names.pop_back();
      if (!v.levels.empty()) {
        v.level_axis = "level";
        for (int k = 2; ds.axis(v.level_axis) && ds.axis(v.level_axis)->coordinate != v.levels; ++k)
          v.level_axis = "level" + std::to_string(k);
        Axis& la = use_axis(v.level_axis, static_cast<std::int64_t>(v.levels.size()), name);
        la.coordinate = v.levels;
        la.coordinate_from = "levels";
        la.coordinate_attrs = {{"long_name", "probability level"}};
        la.units = "1";
      }
    }
    // A series: a new first axis.
    if (group.size() > 1) {
      bool timed = true, stepped = true;
      for (const Record* r : group) {
        timed = timed && numeric_attr(*r, "time");
        stepped = stepped && numeric_attr(*r, "step");
      }
      std::vector<double> coord, steps;
      for (const Record* r : group) {
        if (timed) coord.push_back(r->attrs["time"].get<double>());
        if (stepped) steps.push_back(r->attrs["step"].get<double>());
      }
      std::string base = timed || stepped ? "time" : "group";
      std::string axis_name = base;
      for (int k = 2;; ++k) {
        const Axis* a = ds.axis(axis_name);
        if (!a) break;
        if (a->size == static_cast<std::int64_t>(group.size()) && a->coordinate == (timed ? coord : steps)) break;
        axis_name = base + std::to_string(k);
      }
      Axis& a = use_axis(axis_name, static_cast<std::int64_t>(group.size()), name);
      if (a.coordinate.empty() && (timed || stepped)) {
        a.coordinate = timed ? coord : steps;
        a.coordinate_from = timed ? "attrs time" : "attrs step";
        a.coordinate_attrs = {{"long_name", timed ? "time" : "step"}};
        if (timed && stepped) a.coordinate_attrs["steps"] = steps;
        a.units = timed ? units_of(first.attrs, "time", name) : "1";
      }
      v.dims.push_back(axis_name);
      v.shape.push_back(static_cast<std::int64_t>(group.size()));
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      use_axis(names[i], first.shape[i], name);
      v.dims.push_back(names[i]);
      v.shape.push_back(first.shape[i]);
    }
    // Grid coordinates: origin + k * spacing along each named axis.
    if (auto g = v.attrs.find("grid"); g != v.attrs.end() && g->is_object()) {
      auto dims = string_list(*g, "dims");
      auto origin = number_list(g->value("origin", json()));
      auto spacing = number_list(g->value("spacing", json()));
      if (dims && origin && spacing && dims->size() == ndim && origin->size() == ndim && spacing->size() == ndim) {
        for (std::size_t i = 0; i < ndim; ++i) {
          for (auto& a : ds.axes)
            if (a.name == (*dims)[i] && a.coordinate.empty()) {
              for (std::int64_t k = 0; k < a.size; ++k) a.coordinate.push_back((*origin)[i] + static_cast<double>(k) * (*spacing)[i]);
              a.coordinate_from = "grid";
              a.coordinate_attrs = {{"long_name", a.name}, {"spacing", (*spacing)[i]}};
              a.units = units_of(first.attrs, a.name, name);
            }
        }
      }
    }
    const std::string kind = kind_of(first);
    const bool field_kind = ends_with(kind, ".state") || ends_with(kind, ".snapshot");
    v.gridded = (v.attrs.contains("grid") && v.attrs["grid"].is_object()) || (field_kind && names.size() >= 2);
    ds.variables.push_back(std::move(v));
  }

  // Coordinate variables: 1-D, not a series, named like their axis.
  for (auto& v : ds.variables) {
    if (v.records.size() == 1 && v.dims.size() == 1 && v.dims[0] == v.name && !v.is_table()) {
      v.coordinate = true;
      for (auto& a : ds.axes)
        if (a.name == v.name) {
          a.coordinate.resize(static_cast<std::size_t>(a.size));
          for (std::size_t i = 0; i < a.coordinate.size(); ++i) a.coordinate[i] = v.value(i, 0);
          a.coordinate_from = "record " + v.name;
          a.coordinate_dtype = v.dtype;
          a.coordinate_attrs = json::object();
          a.units = v.units;
          if (v.attrs.contains("long_name")) a.coordinate_attrs["long_name"] = v.attrs["long_name"];
          else if (v.attrs.contains("description")) a.coordinate_attrs["long_name"] = v.attrs["description"];
        }
    }
  }

  // Labels: on the axis `labels_of` names, or on the first axis of the record it names.
  for (const Record* l : labels) {
    const std::string of = l->attrs.value("labels_of", std::string());
    std::vector<std::string> text = read_labels(*l);
    std::string target = of;
    if (!ds.axis(target))
      if (const Variable* v = ds.variable(of); v && !v->dims.empty()) {
        // The record's axis the labels fit (the last of that length: a series' points, not its series).
        target = v->dims[v->records.size() > 1 ? 1 : 0];
        for (std::size_t i = v->dims.size(); i-- > (v->records.size() > 1 ? 1u : 0u);)
          if (v->shape[i] == static_cast<std::int64_t>(text.size())) {
            target = v->dims[i];
            break;
          }
      }
    Axis& a = use_axis(target.empty() ? l->name : target, static_cast<std::int64_t>(text.size()), l->name);
    a.labels = std::move(text);
    a.label_days.clear();
    for (const auto& t : a.labels) {
      const auto days = parse_date_days(t);
      if (!days) {
        a.label_days.clear();
        break;
      }
      a.label_days.push_back(*days);
    }
    std::string column = l->attrs.value("column", std::string());
    bool taken = false;  // another axis's labels already carry this name (two "date" columns)
    for (const auto& other : ds.axes) taken = taken || (&other != &a && other.labels_name == column);
    if (column.empty()) a.labels_name = a.name + "_label";
    else if (ds.axis(column) || (ds.variable(column) && !ds.variable(column)->coordinate) || taken)
      a.labels_name = a.name + "_" + column;
    else a.labels_name = column;
  }

  // FinPar's strikes (price without a strike record): strike o = 0.001 * o, as its attrs say.
  for (auto& a : ds.axes) {
    if (a.name != "strike" || !a.coordinate.empty()) continue;
    for (const auto& v : ds.variables)
      if (kind_of(*v.records.front()) == "price.output" && v.attrs.contains("strike") && v.attrs["strike"].is_string() &&
          v.attrs["strike"].get<std::string>().rfind("0.001*o", 0) == 0) {
        for (std::int64_t k = 0; k < a.size; ++k) a.coordinate.push_back(0.001 * static_cast<double>(k));
        a.coordinate_from = "attrs strike";
        a.coordinate_attrs = {{"long_name", "strike"}};
        break;
      }
  }

  // An axis whose coordinate came without units: any record's units table may name it (strike, year).
  for (auto& a : ds.axes)
    for (const Record& r : records)
      if (a.units.empty() && !a.coordinate.empty()) a.units = units_of(r.attrs, a.name, r.name);

  // Global attributes and history: those of the data record written last among
  // those with the longest history (snapshots written during a run may carry less
  // of it; the state the stream ends in is its last record, not its first snapshot).
  const Record* source = nullptr;
  auto history_length = [](const Record* r) -> std::size_t {
    if (!r->attrs.is_object()) return 0;
    auto it = r->attrs.find("history");
    return it != r->attrs.end() && it->is_array() ? it->size() : 0;
  };
  // Tables (diagnostics, logs) describe the run, not its state: a record of the
  // state is preferred where there is one.
  const bool any_plain = std::any_of(ds.variables.begin(), ds.variables.end(),
                                     [](const Variable& v) { return !v.coordinate && !v.is_table(); });
  for (const auto& v : ds.variables) {
    if (v.coordinate || (any_plain && v.is_table())) continue;
    for (const Record* r : v.records)
      if (!source || history_length(r) > history_length(source) ||
          (history_length(r) == history_length(source) && r > source))  // records are stored in stream order
        source = r;
  }
  if (source && source->attrs.is_object()) {
    ds.global_attrs = source->attrs;
    if (ds.global_attrs.contains("history")) {
      if (ds.global_attrs["history"].is_array()) ds.history = ds.global_attrs["history"];
      ds.global_attrs.erase("history");
    }
  }
  return ds;
}

std::optional<double> parse_date_days(const std::string& text) {
  // YYYY-MM-DD[(T| )HH:MM[:SS]]: digits where digits belong, nothing after.
  auto digits = [&](std::size_t at, std::size_t n, int& out) {
    if (at + n > text.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int y, m, d, hh = 0, mm = 0, ss = 0;
  if (!digits(0, 4, y) || text.size() < 10 || text[4] != '-' || !digits(5, 2, m) || text[7] != '-' || !digits(8, 2, d))
    return std::nullopt;
  if (text.size() > 10) {
    const bool hm = (text[10] == 'T' || text[10] == ' ') && digits(11, 2, hh) && text.size() >= 16 && text[13] == ':' &&
                    digits(14, 2, mm);
    const bool hms = hm && text.size() == 19 && text[16] == ':' && digits(17, 2, ss);
    if (!(hm && (text.size() == 16 || hms))) return std::nullopt;
  }
  static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1 || d > month_days[m - 1] || hh > 23 || mm > 59 || ss > 60) return std::nullopt;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (m == 2 && d == 29 && !leap) return std::nullopt;
  // Days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
  const int yy = y - (m <= 2);
  const int era = (yy >= 0 ? yy : yy - 399) / 400;
  const int yoe = yy - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const long days = static_cast<long>(era) * 146097 + doe - 719468;
  return static_cast<double>(days) + (hh * 3600.0 + mm * 60.0 + ss) / 86400.0;
}

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

std::string format_number(const std::byte* p, DType dtype) {
  return visit_dtype(dtype, [p](auto zero) -> std::string {
    using T = decltype(zero);
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::is_same_v<T, double>) {
      return format_double(v);
    } else {
      if constexpr (std::is_same_v<T, float>)
        if (std::isnan(v)) return "nan";
      // a float's shortest form that reads back as this float; a u1 as its number
      using Shown = std::conditional_t<std::is_same_v<T, std::uint8_t>, unsigned, T>;
      char buf[64];
      char* end = std::to_chars(buf, buf + sizeof buf, static_cast<Shown>(v)).ptr;
      return std::string(buf, end);
    }
  });
}

}  // namespace numpipe::exporter
