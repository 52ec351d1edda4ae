#include "store.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/profile.hpp"

namespace numpipe::calibrate {

std::string utc_now() { return utc_now_iso(); }

json entry(const Rates& r, const std::string& kind, const std::string& date) {
  return {{"kind", kind},
          {"peak_bandwidth_gbs", r.bandwidth_gbs},
          {"peak_fp64_gflops", r.fp64_gflops},
          {"peak_fp32_gflops", r.fp32_gflops},
          {"date", date},
          {"method", r.method}};
}

json store(const std::string& path, const std::string& name, const json& e, std::vector<std::string>* kept) {
  namespace fs = std::filesystem;
  json all = json::object();
  std::error_code ec;
  if (fs::exists(path, ec)) {
    std::ifstream f(path);
    if (!f) fail_resource("cannot read the calibration file '" + path + "': " + std::strerror(errno));
    std::stringstream text;
    text << f.rdbuf();
    all = json::parse(text.str(), nullptr, false);
    if (all.is_discarded() || !all.is_object())
      fail_input("the calibration file '" + path +
                 "' is not a JSON object keyed by device name; fix or remove it, then calibrate again");
  }
  // A device's peaks do not fall: a measurement below the stored one was taken on a busy
  // machine (or with --quick's small sizes), and would put later runs above their roofs.
  // The higher, earlier peak stays, and the caller says so.
  json merged = e;
  if (all.contains(name) && all[name].is_object())
    for (const char* key : {"peak_bandwidth_gbs", "peak_fp64_gflops", "peak_fp32_gflops"}) {
      const json& old = all[name].value(key, json());
      if (old.is_number() && merged.value(key, json()).is_number() && old.get<double>() > merged[key].get<double>()) {
        if (kept) kept->push_back(std::string(key) + " " + json(merged[key]).dump() + " measured, " + old.dump() + " kept");
        merged[key] = old;
      }
    }
  all[name] = merged;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) fail_resource("cannot create the folder '" + parent.string() + "' for the calibration file: " + ec.message());
  }
  OutputFile out(path, false);
  std::string text = all.dump(2) + "\n";
  out.write(text.data(), text.size());
  out.commit();
  return all;
}

}  // namespace numpipe::calibrate
