// VTK XML image data (.vti, "appended" raw binary with UInt64 block headers)
// and a .pvd collection for a time series; ParaView and VisIt open both.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "common/progress.hpp"
#include "common/strings.hpp"
#include "export/formats.hpp"

namespace numpipe::exporter {
namespace {

const char* vtk_type(DType t) {
  switch (t) {
    case DType::f8: return "Float64";
    case DType::f4: return "Float32";
    case DType::i8: return "Int64";
    case DType::i4: return "Int32";
    case DType::u8: return "UInt64";
    case DType::u1: return "UInt8";
  }
  return "Float64";
}


std::string field_name(const std::string& record) {
  return record.rfind("snap_", 0) == 0 && record.size() > 5 ? record.substr(5) : record;
}

// The fields of one image: same spatial axes (the series axis, if any, first).
struct Group {
  std::vector<const Variable*> fields;
  std::vector<std::string> space;  // spatial axes in storage order
  Shape shape;                     // their sizes
  bool series = false;
};

std::vector<std::string> spatial(const Variable& v) {
  return v.records.size() > 1 ? std::vector<std::string>(v.dims.begin() + 1, v.dims.end()) : v.dims;
}

// VTK's x varies fastest: axes named x, y (and z) go to VTK's x, y, z; other
// names map the last storage axis to x.
std::vector<int> vtk_axes(const std::vector<std::string>& space) {
  std::vector<int> storage_of(3, -1);  // VTK axis -> storage axis
  const char* names[3] = {"x", "y", "z"};
  bool named = true;
  for (std::size_t a = 0; a < space.size(); ++a) {
    auto it = std::find(space.begin(), space.end(), names[a]);
    if (it == space.end()) named = false;
    else storage_of[a] = static_cast<int>(it - space.begin());
  }
  if (!named)
    for (std::size_t a = 0; a < space.size(); ++a) storage_of[a] = static_cast<int>(space.size() - 1 - a);
  for (std::size_t a = space.size(); a < 3; ++a) storage_of[a] = -1;
  return storage_of;
}

struct Geometry {
  std::int64_t n[3] = {1, 1, 1};
  double origin[3] = {0, 0, 0}, spacing[3] = {1, 1, 1};
  std::int64_t stride[3] = {0, 0, 0};  // storage stride of each VTK axis
  bool identity = false;               // VTK order is storage order reversed: a plain copy
};

Geometry geometry(const Dataset& ds, const Group& g, std::vector<std::string>& notes) {
  Geometry geo;
  const auto map = vtk_axes(g.space);
  std::vector<std::int64_t> strides(g.space.size(), 1);
  for (std::size_t i = g.space.size(); i-- > 1;) strides[i - 1] = strides[i] * g.shape[i];
  geo.identity = true;
  for (int a = 0; a < 3; ++a) {
    const int s = map[static_cast<std::size_t>(a)];
    if (s < 0) continue;
    geo.n[a] = g.shape[static_cast<std::size_t>(s)];
    geo.stride[a] = strides[static_cast<std::size_t>(s)];
    geo.identity = geo.identity && s == static_cast<int>(g.space.size()) - 1 - a;
    const Axis* ax = ds.axis(g.space[static_cast<std::size_t>(s)]);
    if (ax && !ax->coordinate.empty()) {
      const auto& c = ax->coordinate;
      geo.origin[a] = c[0];
      if (c.size() > 1) {
        const double h = c[1] - c[0];
        bool uniform = h != 0;
        for (std::size_t i = 1; i < c.size() && uniform; ++i)
          uniform = std::fabs((c[i] - c[i - 1]) - h) <= 1e-9 * std::fabs(h);
        if (uniform) geo.spacing[a] = h;
        else notes.push_back("axis '" + ax->name + "' is not evenly spaced: VTK image data gets spacing 1");
      }
    }
  }
  return geo;
}

// One record's values in VTK order (x fastest), as bytes.
void gather(const Record& r, const Geometry& geo, std::vector<std::byte>& out) {
  const std::size_t es = dtype_size(r.dtype);
  const std::size_t count = static_cast<std::size_t>(geo.n[0] * geo.n[1] * geo.n[2]);
  out.resize(count * es);
  if (geo.identity) {
    std::memcpy(out.data(), r.payload.data(), count * es);
    return;
  }
  std::size_t o = 0;
  for (std::int64_t k = 0; k < geo.n[2]; ++k)
    for (std::int64_t j = 0; j < geo.n[1]; ++j)
      for (std::int64_t i = 0; i < geo.n[0]; ++i, ++o) {
        const auto src = static_cast<std::size_t>(i * geo.stride[0] + j * geo.stride[1] + k * geo.stride[2]);
        std::memcpy(out.data() + o * es, r.payload.data() + src * es, es);
      }
}

// Removes files written so far unless release() is called (a failure leaves no partial collection).
struct Written {
  std::vector<std::string> paths;
  bool kept = false;
  ~Written() {
    if (!kept)
      for (const auto& p : paths) std::remove(p.c_str());
  }
};

void write_vti(const std::string& path, const Group& g, std::size_t step, const Geometry& geo, bool has_time, double time) {
  struct Array {
    std::string name;
    DType dtype;
    int components;
    std::vector<std::byte> bytes;
    std::string units;
  };
  std::vector<Array> arrays;
  std::map<std::string, const Record*> by_name;
  for (const Variable* v : g.fields) {
    const Record& r = *v->records[g.series ? step : 0];
    Array a{field_name(v->name), v->dtype, 1, {}, v->units};
    gather(r, geo, a.bytes);
    by_name[a.name] = &r;
    arrays.push_back(std::move(a));
  }
  // Velocity as one vector array (ParaView's glyphs and stream tracers want one).
  const bool two_d = g.space.size() == 2;
  std::vector<std::string> parts = two_d ? std::vector<std::string>{"u", "v"} : std::vector<std::string>{"vx", "vy", "vz"};
  bool velocity = std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return by_name.count(p); });
  if (velocity) {
    const DType t = by_name[parts[0]]->dtype;
    for (const auto& p : parts) velocity = velocity && by_name[p]->dtype == t && (t == DType::f8 || t == DType::f4);
    if (velocity) {
      const std::size_t es = dtype_size(t), count = static_cast<std::size_t>(geo.n[0] * geo.n[1] * geo.n[2]);
      std::string units;  // the components' units when they agree
      for (const auto& a : arrays)
        if (a.name == parts[0]) units = a.units;
      for (const auto& a : arrays)
        if (std::find(parts.begin(), parts.end(), a.name) != parts.end() && a.units != units) units.clear();
      Array vec{"velocity", t, 3, std::vector<std::byte>(count * 3 * es, std::byte{0}), units};
      for (std::size_t c = 0; c < parts.size(); ++c) {
        const auto& src = std::find_if(arrays.begin(), arrays.end(), [&](const Array& a) { return a.name == parts[c]; })->bytes;
        for (std::size_t i = 0; i < count; ++i) std::memcpy(vec.bytes.data() + (3 * i + c) * es, src.data() + i * es, es);
      }
      arrays.push_back(std::move(vec));
    }
  }
  char extent[160];
  std::snprintf(extent, sizeof extent, "0 %lld 0 %lld 0 %lld", static_cast<long long>(geo.n[0] - 1),
                static_cast<long long>(geo.n[1] - 1), static_cast<long long>(geo.n[2] - 1));
  std::string x = "<?xml version=\"1.0\"?>\n"
                  "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n";
  x += std::string("  <ImageData WholeExtent=\"") + extent + "\" Origin=\"" + format_double(geo.origin[0]) + " " +
       format_double(geo.origin[1]) + " " + format_double(geo.origin[2]) + "\" Spacing=\"" + format_double(geo.spacing[0]) +
       " " + format_double(geo.spacing[1]) + " " + format_double(geo.spacing[2]) + "\">\n";
  // Units: a string array "units" of "NAME=UNITS" in the field data (VTK's ASCII
  // strings: each character's code, then 0), as ParaView's spreadsheet view shows it.
  std::vector<std::string> units;
  for (const auto& a : arrays)
    if (!a.units.empty()) units.push_back(a.name + "=" + a.units);
  if (has_time || !units.empty()) {
    x += "    <FieldData>\n";
    if (has_time)
      x += "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">" +
           format_double(time) + "</DataArray>\n";
    if (!units.empty()) {
      x += "      <DataArray type=\"String\" Name=\"units\" NumberOfTuples=\"" + std::to_string(units.size()) +
           "\" format=\"ascii\">";
      for (const auto& u : units) {
        for (unsigned char c : u) x += std::to_string(c) + " ";
        x += "0 ";
      }
      x.pop_back();
      x += "</DataArray>\n";
    }
    x += "    </FieldData>\n";
  }
  x += std::string("    <Piece Extent=\"") + extent + "\">\n      <PointData Scalars=\"" + xml_escape(arrays.front().name) + "\"" +
       (velocity ? " Vectors=\"velocity\"" : "") + ">\n";
  std::uint64_t offset = 0;
  for (const auto& a : arrays) {
    x += "        <DataArray type=\"" + std::string(vtk_type(a.dtype)) + "\" Name=\"" + xml_escape(a.name) + "\"" +
         (a.components > 1 ? " NumberOfComponents=\"" + std::to_string(a.components) + "\"" : "") +
         " format=\"appended\" offset=\"" + std::to_string(offset) + "\"/>\n";
    offset += 8 + a.bytes.size();
  }
  x += "      </PointData>\n    </Piece>\n  </ImageData>\n  <AppendedData encoding=\"raw\">\n   _";
  OutputFile out(path);
  out.write(x.data(), x.size());
  for (const auto& a : arrays) {
    const std::uint64_t n = a.bytes.size();  // little-endian host: the header as is
    out.write(&n, sizeof n);
    out.write(a.bytes.data(), a.bytes.size());
  }
  const std::string tail = "\n  </AppendedData>\n</VTKFile>\n";
  out.write(tail.data(), tail.size());
  out.commit();
}

}  // namespace

std::vector<std::string> write_vtk(const Dataset& ds, const std::string& path, std::vector<std::string>& notes, bool quiet) {
  const bool collection = path.size() > 4 && path.compare(path.size() - 4, 4, ".pvd") == 0;
  // The fields: gridded variables first; else any plain 2-D or 3-D variable.
  std::vector<const Variable*> candidates;
  for (int pass = 0; pass < 2 && candidates.empty(); ++pass)
    for (const auto& v : ds.variables) {
      const auto space = spatial(v);
      if (v.coordinate || v.is_table() || space.size() < 2 || space.size() > 3) continue;
      if (pass == 0 && !v.gridded) continue;
      candidates.push_back(&v);
    }
  if (candidates.empty()) fail_input("--to vtk: the stream holds no 2-D or 3-D field (VTK image data holds grids)");
  Group g;
  const Variable* lead = nullptr;
  for (const Variable* v : candidates)
    if ((v->records.size() > 1) == collection) {
      lead = v;
      break;
    }
  if (!lead) {
    if (!collection)
      fail_input("--to vtk: the stream holds only snapshot series; write a collection with -o NAME.pvd");
    lead = candidates.front();  // a single state as a one-step collection
  }
  g.series = lead->records.size() > 1;
  g.space = spatial(*lead);
  g.shape.assign(lead->shape.end() - static_cast<std::ptrdiff_t>(g.space.size()), lead->shape.end());
  for (const Variable* v : candidates) {
    const bool same = (v->records.size() > 1) == g.series && spatial(*v) == g.space &&
                      (!g.series || (v->dims[0] == lead->dims[0]));
    if (same) g.fields.push_back(v);
    else if ((v->records.size() > 1) == g.series) notes.push_back("left out '" + v->name + "' (other axes or times)");
  }
  const Geometry geo = geometry(ds, g, notes);

  Written written;
  const std::size_t steps = collection && g.series ? lead->records.size() : 1;
  Progress progress("nps-export", "files", steps, quiet);
  if (!collection) {
    write_vti(path, g, 0, geo, false, 0);
    progress.update(1);
    written.kept = true;
    return {path};
  }
  const std::string base = path.substr(0, path.size() - 4);
  const Axis* time_axis = g.series ? ds.axis(lead->dims[0]) : nullptr;
  const int width = std::max(4, static_cast<int>(std::to_string(steps - 1).size()));
  const std::string dir_prefix = base.substr(0, base.find_last_of('/') + 1);
  std::string pvd = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "  <Collection>\n";
  for (std::size_t k = 0; k < steps; ++k) {
    std::string number = std::to_string(k);
    number.insert(0, static_cast<std::size_t>(std::max(0, width - static_cast<int>(number.size()))), '0');
    const std::string file = base + "_" + number + ".vti";
    double t = static_cast<double>(k);
    if (time_axis && !time_axis->coordinate.empty()) t = time_axis->coordinate[k];
    else if (!g.series) t = lead->attrs.value("time", lead->attrs.value("t", 0.0));
    write_vti(file, g, k, geo, true, t);
    written.paths.push_back(file);
    progress.update(k + 1);
    pvd += "    <DataSet timestep=\"" + format_double(t) + "\" group=\"\" part=\"0\" file=\"" +
           xml_escape(file.substr(dir_prefix.size())) + "\"/>\n";
  }
  pvd += "  </Collection>\n</VTKFile>\n";
  OutputFile out(path, false);
  out.write(pvd.data(), pvd.size());
  out.commit();
  written.kept = true;
  std::vector<std::string> files = written.paths;
  files.push_back(path);
  return files;
}

}  // namespace numpipe::exporter
