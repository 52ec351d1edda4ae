// nps-export: a numpipe stream to the formats other programs open: CSV tables
// (spreadsheets, pandas, R), NetCDF-4 with CF conventions (xarray, ncview,
// Panoply) and VTK image data (ParaView, VisIt). The axes, coordinates and
// labels come from the records' attrs (tools/export/dataset.hpp). The program
// is nps-export, not export: every shell runs its own `export` builtin first.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/cli.hpp"
#include "common/progress.hpp"
#include "common/signals.hpp"
#include "common/strings.hpp"
#include "export/dataset.hpp"
#include "export/formats.hpp"

namespace numpipe {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string format_from_suffix(const std::string& path) {
  if (ends_with(path, ".csv")) return "csv";
  for (const char* s : {".nc", ".nc4", ".cdf", ".netcdf"})
    if (ends_with(path, s)) return "netcdf";
  if (ends_with(path, ".vti") || ends_with(path, ".pvd")) return "vtk";
  return "";
}

// NetCDF writes a file by name: a temporary one beside the output (or in
// TMPDIR for stdout), copied through OutputFile so the result appears whole or not at all.
void export_netcdf(const exporter::Dataset& ds, const std::string& out_path, int deflate, const std::string& command) {
  if (!exporter::netcdf_built()) exporter::write_netcdf(ds, "", deflate, command);  // says what to install
  OutputFile out(out_path);  // refuses a terminal before the work
  std::string dir = "/tmp";
  if (const char* t = std::getenv("TMPDIR"); t && *t) dir = t;
  if (out_path != "-" && out_path.find('/') != std::string::npos) dir = out_path.substr(0, out_path.find_last_of('/'));
  else if (out_path != "-") dir = ".";
  std::string pattern = dir + "/.tmp-export-XXXXXX";
  std::string temp;
  const int fd = create_registered_temp(pattern, 0, &temp);
  if (fd < 0) fail_resource("cannot create a temporary file in " + dir + ": " + std::strerror(errno));
  close(fd);
  struct Remove {
    std::string path;
    ~Remove() {
      std::remove(path.c_str());
      unregister_temp_file(path);
    }
  } remove{temp};
  exporter::write_netcdf(ds, temp, deflate, command);
  std::ifstream in(temp, std::ios::binary);
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    if (in.gcount() > 0) out.write(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) fail_resource("cannot read back " + temp);
  out.commit();
}

int run(int argc, char** argv) {
  Cli cli({"nps-export", "Write a stream as CSV, NetCDF-4 (CF conventions) or VTK image data", "",
           "  gen-input mle --length 2000 --seed 3 | mle-fit --window 500 --step 250 --quantiles 0.01 | nps-export -o fits.csv\n"
           "  gen-input fluid --n 64 | fluid-step --steps 20 | nps-export -o state.nc\n"
           "  gen-input fluid --n 64 | fluid-step --steps 20 | nps-export -o state.vti",
           "the CSV table, NetCDF-4 file or VTK image data (the format from --to or the suffix)",
           "No progress line on stderr (a CSV's rows, a NetCDF file's records or the VTK files written, shown on a terminal after a second)"},
          kInput | kOutput | kNotStream);
  std::optional<std::string> to;
  cli.option("to", &to, "csv, netcdf or vtk (default: from the suffix of -o: .csv, .nc, .vti or .pvd)", "FORMAT",
             "Export")
      .one_of({"csv", "netcdf", "vtk"});
  cli.add("Export")(
      "records", "The records to export, by name (CSV: the columns of the table; default: every record that fits "
                 "the largest table, leaving out fields on a grid)",
      cxxopts::value<std::string>(), "A,B,...")(
      "deflate", "NetCDF: zlib level, 0 (none) to 9", cxxopts::value<int>()->default_value("1"), "N");
  cli.parse(argc, argv);
  const std::string out_path = cli.output();
  const std::string format = to ? *to : format_from_suffix(out_path);
  if (format.empty())
    fail_input(out_path == "-" ? "say which format: --to csv|netcdf|vtk, or -o FILE ending in .csv, .nc, .vti or .pvd"
                               : "cannot tell the format from '" + out_path + "': give --to csv|netcdf|vtk");
  const int deflate = cli.get<int>("deflate");
  if (deflate < 0 || deflate > 9) fail_input("--deflate must be 0 to 9, got " + std::to_string(deflate));
  if (format == "netcdf" && !exporter::netcdf_built()) exporter::write_netcdf({}, "", 0, "");
  if (format == "vtk" && out_path == "-") fail_input("--to vtk writes files: give -o NAME.vti (one state) or -o NAME.pvd (a series)");
  if (format == "vtk" && !ends_with(out_path, ".vti") && !ends_with(out_path, ".pvd"))
    fail_input("--to vtk: -o must end in .vti (one state) or .pvd (a time series), got '" + out_path + "'");
  const std::vector<std::string> names = cli.has("records") ? split_items(cli.get<std::string>("records")) : std::vector<std::string>{};
  std::optional<OutputFile> text_out;
  if (format == "csv") text_out.emplace(out_path, false);

  const auto records = read_input(cli);
  exporter::Dataset ds = exporter::build_dataset(records);
  std::vector<std::string> notes;
  if (format == "csv") {
    const exporter::TableChoice table = exporter::choose_table(ds, names);
    std::string fields;  // on a grid: not a spreadsheet
    for (const auto& n : table.left_out) {
      if (ds.variable(n)->gridded) fields += (fields.empty() ? "" : ", ") + n;
      else notes.push_back("left out '" + n + "' (other axes: export it with --records " + n + ")");
    }
    if (!fields.empty()) notes.push_back("left out the fields on a grid: " + fields + " (export them with --to netcdf or --to vtk)");
    std::uint64_t rows = 1;
    for (const auto& d : table.dims) rows *= static_cast<std::uint64_t>(ds.axis(d)->size);
    Progress progress("nps-export", "rows", rows, cli.quiet());
    ActiveProgress active(progress);
    exporter::write_csv(ds, table, *text_out);
    progress.update(rows);
    progress.finish();
    text_out->commit();
  } else {
    if (!names.empty()) {  // keep the named variables (and the coordinates)
      for (const auto& n : names)
        if (!ds.variable(n)) fail_input("--records: no record '" + n + "' in the stream");
      std::vector<exporter::Variable> kept;
      for (auto& v : ds.variables)
        if (v.coordinate || std::find(names.begin(), names.end(), v.name) != names.end()) kept.push_back(std::move(v));
      ds.variables = std::move(kept);
    }
    if (format == "netcdf") {
      std::uint64_t records_total = 0;
      for (const auto& v : ds.variables)
        if (!v.coordinate) records_total += v.records.size();
      Progress progress("nps-export", "records", records_total, cli.quiet());
      ActiveProgress active(progress);
      export_netcdf(ds, out_path, deflate, cli.command_line());
      progress.finish();
    } else {
      exporter::write_vtk(ds, out_path, notes, cli.quiet());
    }
  }
  if (!cli.quiet())
    for (const auto& n : notes) std::fprintf(stderr, "nps-export: %s\n", n.c_str());
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) { return numpipe::run_tool("nps-export", [&] { return numpipe::run(argc, argv); }); }
