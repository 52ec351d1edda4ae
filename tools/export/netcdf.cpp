// NetCDF-4 files following the CF conventions (1.8), through libnetcdf.
#include <fcntl.h>
#include <netcdf.h>
#include <netcdf_mem.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "common/cli.hpp"
#include "common/progress.hpp"
#include "common/signals.hpp"
#include "export/formats.hpp"

namespace numpipe::exporter {
namespace {

void check(int status, const std::string& what) {
  if (status != NC_NOERR) fail_resource("NetCDF: " + what + ": " + nc_strerror(status));
}

nc_type nc_type_of(DType t) {
  switch (t) {
    case DType::f8: return NC_DOUBLE;
    case DType::f4: return NC_FLOAT;
    case DType::i8: return NC_INT64;
    case DType::i4: return NC_INT;
    case DType::u8: return NC_UINT64;
    case DType::u1: return NC_UBYTE;
  }
  return NC_DOUBLE;
}

// Names as CF recommends them: letters, digits and '_' ('.', '-', '+' kept
// inside a name), starting with a letter ("row name" -> row_name, "0.01" -> v0.01).
std::string nc_name(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += (std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '+') ? static_cast<char>(c) : '_';
  if (out.empty() || !std::isalpha(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

void put_text(int ncid, int varid, const std::string& key, const std::string& value) {
  check(nc_put_att_text(ncid, varid, nc_name(key).c_str(), value.size(), value.c_str()), "attribute " + key);
}

// A JSON attrs value as a NetCDF attribute: strings as text, numbers (and
// arrays of them) as numbers, booleans as 0/1, anything else as its JSON text.
void put_attr(int ncid, int varid, const std::string& key, const json& value) {
  const std::string name = nc_name(key);
  if (value.is_string()) return put_text(ncid, varid, key, value.get<std::string>());
  if (value.is_boolean()) {
    const int b = value.get<bool>() ? 1 : 0;
    return check(nc_put_att_int(ncid, varid, name.c_str(), NC_INT, 1, &b), "attribute " + key);
  }
  if (value.is_number_integer()) {
    const long long v = value.get<long long>();
    return check(nc_put_att_longlong(ncid, varid, name.c_str(), NC_INT64, 1, &v), "attribute " + key);
  }
  if (value.is_number()) {
    const double v = value.get<double>();
    return check(nc_put_att_double(ncid, varid, name.c_str(), NC_DOUBLE, 1, &v), "attribute " + key);
  }
  if (value.is_array() && !value.empty() &&
      std::all_of(value.begin(), value.end(), [](const json& x) { return x.is_number(); })) {
    std::vector<double> v;
    for (const auto& x : value) v.push_back(x.get<double>());
    return check(nc_put_att_double(ncid, varid, name.c_str(), NC_DOUBLE, v.size(), v.data()), "attribute " + key);
  }
  if (value.is_null()) return;
  put_text(ncid, varid, key, value.dump());
}

// Chunks of at most ~4 MiB: a series one step at a time, the largest axis halved until it fits.
std::vector<std::size_t> chunks(const std::vector<std::size_t>& sizes, std::size_t element, bool series) {
  std::vector<std::size_t> c = sizes;
  if (series && !c.empty()) c[0] = 1;
  auto bytes = [&] {
    std::size_t b = element;
    for (auto x : c) b *= std::max<std::size_t>(x, 1);
    return b;
  };
  while (bytes() > (4u << 20)) {
    auto it = std::max_element(c.begin(), c.end());
    if (*it <= 1) break;
    *it = (*it + 1) / 2;
  }
  for (auto& x : c) x = std::max<std::size_t>(x, 1);
  return c;
}

const char* cf_axis(const std::string& name) {
  if (name == "x") return "X";
  if (name == "y") return "Y";
  if (name == "z") return "Z";
  if (name == "time") return "T";
  return nullptr;
}

}  // namespace

bool netcdf_built() { return true; }

namespace {
// A failed close leaves HDF5 (under libnetcdf) in a state its exit-time clean-up
// was seen to crash on (SIGSEGV after main returned): the message is printed and
// the process ends here, without that clean-up.
[[noreturn]] void fail_closing(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", tool_name().c_str(), message.c_str());
  remove_temp_files_now();
  std::fflush(nullptr);
  _exit(static_cast<int>(ExitCode::resource));
}

// Writes the finished file's bytes to `path` (errors as exit 3 naming the cause:
// "No space left on device", a quota, an I/O error).
void write_file(const std::string& path, const void* bytes, std::size_t size) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_resource("cannot write the NetCDF file " + path + ": " + std::strerror(errno));
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = write(fd, static_cast<const char*>(bytes) + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      close(fd);
      fail_resource("cannot write the NetCDF file " + path + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (close(fd) != 0) fail_resource("cannot write the NetCDF file " + path + ": " + std::strerror(errno));
}
}  // namespace

// The file is made in memory (libnetcdf's NC_INMEMORY: HDF5's core driver) and then
// written out in one piece: a full disk is then an ordinary write error naming its
// cause, never an HDF5 error in the middle of the file's structures.
void write_netcdf(const Dataset& ds, const std::string& path, int deflate, const std::string& export_command) {
  int ncid = -1;
  check(nc_create_mem(path.c_str(), NC_NETCDF4, std::size_t(1) << 20, &ncid), "cannot create " + path + " in memory");
  struct Closer {
    int id;
    ~Closer() {
      if (id >= 0) nc_close(id);
    }
  } closer{ncid};
  std::set<std::string> names;
  auto unique = [&](std::string n) {
    n = nc_name(n);
    while (names.count(n)) n += "_";
    names.insert(n);
    return n;
  };

  // Dimensions: every axis.
  std::map<std::string, int> dim_id;
  for (const auto& a : ds.axes) {
    int id;
    check(nc_def_dim(ncid, nc_name(a.name).c_str(), static_cast<std::size_t>(a.size), &id), "dimension " + a.name);
    dim_id[a.name] = id;
    names.insert(nc_name(a.name));  // coordinate variables take the dimension's name
  }
  auto enable_deflate = [&](int varid, const std::vector<std::size_t>& sizes, std::size_t element, bool series) {
    if (sizes.empty()) return;
    auto c = chunks(sizes, element, series);
    check(nc_def_var_chunking(ncid, varid, NC_CHUNKED, c.data()), "chunking");
    if (deflate > 0) check(nc_def_var_deflate(ncid, varid, 1, 1, deflate), "compression");
  };

  // Coordinate variables, steps of a time axis, labels.
  struct Pending {
    int varid;
    std::vector<double> values;   // numeric coordinate values
    DType dtype = DType::f8;
    std::vector<std::string> text;  // labels
  };
  std::vector<Pending> pending;
  std::map<std::string, std::vector<std::string>> aux_of_axis;  // axis -> auxiliary coordinate names
  for (const auto& a : ds.axes) {
    const int d = dim_id[a.name];
    if (!a.coordinate.empty()) {
      int varid;
      const DType t = a.coordinate_from.rfind("record ", 0) == 0 ? a.coordinate_dtype : DType::f8;
      check(nc_def_var(ncid, nc_name(a.name).c_str(), nc_type_of(t), 1, &d, &varid), "coordinate " + a.name);
      for (const auto& [k, v] : a.coordinate_attrs.items())
        if (k != "steps" && k != "units") put_attr(ncid, varid, k, v);
      if (!a.coordinate_attrs.contains("long_name")) put_text(ncid, varid, "long_name", a.name);
      if (!a.units.empty()) put_text(ncid, varid, "units", a.units);
      if (const char* axis = cf_axis(a.name)) put_text(ncid, varid, "axis", axis);
      if (a.name == "time") put_text(ncid, varid, "standard_name", "time");
      // A time with a reference date is a CF time coordinate: it names its calendar.
      if (a.units.find(" since ") != std::string::npos) put_text(ncid, varid, "calendar", kDateCalendar);
      pending.push_back({varid, a.coordinate, t, {}});
      if (a.coordinate_attrs.contains("steps")) {
        const std::string n = unique(a.name == "time" ? "step" : a.name + "_step");
        int sid;
        check(nc_def_var(ncid, n.c_str(), NC_INT64, 1, &d, &sid), "variable " + n);
        put_text(ncid, sid, "long_name", "solver step");
        put_text(ncid, sid, "units", "1");
        pending.push_back({sid, a.coordinate_attrs["steps"].get<std::vector<double>>(), DType::i8, {}});
        aux_of_axis[a.name].push_back(n);
      }
    }
    if (!a.labels.empty() && !a.label_days.empty()) {  // dates: a CF time coordinate (xarray decodes it)
      const std::string n = unique(a.labels_name);
      int lid;
      check(nc_def_var(ncid, n.c_str(), NC_DOUBLE, 1, &d, &lid), "dates " + n);
      put_text(ncid, lid, "long_name", a.labels_name + " of " + a.name);
      put_text(ncid, lid, "standard_name", "time");
      put_text(ncid, lid, "units", kDateUnits);
      put_text(ncid, lid, "calendar", kDateCalendar);
      pending.push_back({lid, a.label_days, DType::f8, {}});
      aux_of_axis[a.name].push_back(n);
    } else if (!a.labels.empty()) {
      const std::string n = unique(a.labels_name);
      int lid;
      check(nc_def_var(ncid, n.c_str(), NC_STRING, 1, &d, &lid), "labels " + n);
      put_text(ncid, lid, "long_name", "labels of " + a.name);
      pending.push_back({lid, {}, DType::f8, a.labels});
      aux_of_axis[a.name].push_back(n);
    }
  }

  // Data variables.
  struct DataVar {
    int varid;
    const Variable* v;
    int column;  // -1: the whole record (levels included)
  };
  std::vector<DataVar> data;
  for (const auto& v : ds.variables) {
    if (v.coordinate) continue;
    std::vector<int> dims;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < v.dims.size(); ++i) {
      dims.push_back(dim_id.at(v.dims[i]));
      sizes.push_back(static_cast<std::size_t>(v.shape[i]));
    }
    std::string coords;
    for (const auto& d : v.dims)
      for (const auto& n : aux_of_axis[d]) coords += (coords.empty() ? "" : " ") + n;
    json attrs = v.attrs;
    for (const char* k : {"history", "grid", "dims", "columns", "level_names", "levels"}) attrs.erase(k);
    auto describe = [&](int varid, const std::string& long_name, const std::string& units) {
      if (!units.empty()) put_text(ncid, varid, "units", units);
      put_text(ncid, varid, "long_name", long_name);
      if (!coords.empty()) put_text(ncid, varid, "coordinates", coords);
      for (const auto& [k, value] : attrs.items()) {
        if (k == "units" || k == "long_name" || k == "description") continue;
        if (ds.global_attrs.contains(k) && ds.global_attrs[k] == value && k != "kind") continue;
        put_attr(ncid, varid, k, value);
      }
    };
    const std::string long_name = attrs.value("long_name", attrs.value("description", v.name));
    if (v.is_table() && v.levels.empty()) {
      for (std::size_t c = 0; c < v.columns.size(); ++c) {
        int varid;
        const std::string n = unique(v.name + "_" + v.columns[c]);
        check(nc_def_var(ncid, n.c_str(), nc_type_of(v.dtype), static_cast<int>(dims.size()), dims.data(), &varid),
              "variable " + n);
        enable_deflate(varid, sizes, dtype_size(v.dtype), v.records.size() > 1);
        describe(varid, v.columns[c] + " (column of " + v.name + ")", v.column_units[c]);
        data.push_back({varid, &v, static_cast<int>(c)});
      }
      continue;
    }
    if (v.is_table()) {  // numeric levels: their own dimension
      dims.push_back(dim_id.at(v.level_axis));
      sizes.push_back(v.levels.size());
    }
    int varid;
    const std::string n = unique(v.name);
    check(nc_def_var(ncid, n.c_str(), nc_type_of(v.dtype), static_cast<int>(dims.size()), dims.data(), &varid),
          "variable " + n);
    enable_deflate(varid, sizes, dtype_size(v.dtype), v.records.size() > 1);
    describe(varid, long_name, v.units);
    data.push_back({varid, &v, -1});
  }

  // Global attributes: CF, provenance, the stream's attrs.
  put_text(ncid, NC_GLOBAL, "Conventions", "CF-1.8");
  put_text(ncid, NC_GLOBAL, "title", "numpipe " + ds.global_attrs.value("kind", std::string("stream")));
  put_text(ncid, NC_GLOBAL, "source", std::string("numpipe ") + numpipe_version() + " (commit " + numpipe_commit() + ")");
  std::string history;
  for (const auto& h : ds.history)
    if (h.is_object()) history += h.value("command", h.value("tool", std::string("?"))) + "\n";
  history += export_command;
  put_text(ncid, NC_GLOBAL, "history", history);
  // The stream's attrs, less those that describe one variable (they stay on it).
  for (const auto& [k, value] : ds.global_attrs.items())
    if (k != "Conventions" && k != "title" && k != "source" && k != "history" && k != "units" && k != "description" &&
        k != "long_name" && k != "dims" && k != "columns" && k != "level_names" && k != "levels")
      put_attr(ncid, NC_GLOBAL, k, value);
  check(nc_enddef(ncid), "end of definitions");

  // Values.
  for (const auto& p : pending) {
    if (!p.text.empty()) {
      std::vector<const char*> ptrs;
      for (const auto& s : p.text) ptrs.push_back(s.c_str());
      const std::size_t start = 0, count = ptrs.size();
      check(nc_put_vara_string(ncid, p.varid, &start, &count, ptrs.data()), "labels");
    } else if (p.dtype == DType::f8) {
      check(nc_put_var_double(ncid, p.varid, p.values.data()), "coordinate values");
    } else {
      // Record-typed coordinates: convert back to the record's type (exact: they came from it).
      std::vector<long long> i(p.values.begin(), p.values.end());
      std::vector<float> f(p.values.begin(), p.values.end());
      if (p.dtype == DType::f4) check(nc_put_var_float(ncid, p.varid, f.data()), "coordinate values");
      else check(nc_put_var_longlong(ncid, p.varid, i.data()), "coordinate values");
    }
  }
  for (const auto& d : data) {
    const Variable& v = *d.v;
    const std::size_t series = v.records.size();
    const std::size_t esize = dtype_size(v.dtype);
    for (std::size_t k = 0; k < series; ++k) {
      const Record& r = *v.records[k];
      std::vector<std::size_t> start, count;
      if (series > 1) start.push_back(k), count.push_back(1);
      for (std::size_t i = series > 1 ? 1 : 0; i < v.shape.size(); ++i)
        start.push_back(0), count.push_back(static_cast<std::size_t>(v.shape[i]));
      if (d.column < 0) {
        if (v.is_table()) start.push_back(0), count.push_back(v.levels.size());
        check(nc_put_vara(ncid, d.varid, start.data(), count.data(), r.payload.data()), "values of " + v.name);
      } else {
        const std::size_t n = r.size() / v.columns.size();
        std::vector<std::byte> column(n * esize);
        for (std::size_t i = 0; i < n; ++i)
          std::memcpy(column.data() + i * esize, r.payload.data() + (i * v.columns.size() + static_cast<std::size_t>(d.column)) * esize, esize);
        check(nc_put_vara(ncid, d.varid, start.data(), count.data(), column.data()), "values of " + v.name);
      }
      if (d.column <= 0)
        if (auto* p = active_progress()) p->advance(1);  // nps-export's line, in records
    }
  }
  closer.id = -1;
  NC_memio image{};
  if (const int status = nc_close_memio(ncid, &image); status != NC_NOERR)
    fail_closing("NetCDF: closing " + path + ": " + nc_strerror(status));
  struct Free {
    void* p;
    ~Free() { std::free(p); }
  } free_image{image.memory};
  write_file(path, image.memory, image.size);
}

}  // namespace numpipe::exporter
