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

json store(const std::string& path, const std::string& name, const json& e) {
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
  all[name] = e;
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
