// The calibration file (numpipe::calibration_path()): a JSON object keyed by
// device name, each {peak_bandwidth_gbs, peak_fp64_gflops, peak_fp32_gflops,
// date, ...}; numpipe::apply_calibration() reads it when a tool queries a device.
#pragma once
#include <string>
#include <vector>

#include "calibrate.hpp"
#include "common/stream.hpp"

namespace numpipe::calibrate {

// The entry stored for one device.
json entry(const Rates& r, const std::string& kind, const std::string& date);
// Reads the file at `path` (an empty object when it does not exist; bad-input
// error when it is not a JSON object), sets all[name] = entry, and writes it back
// atomically, creating the folder. Returns the merged object. A peak of `entry` below
// the one stored for `name` is not stored (the stored one stays): each such peak is
// described in `kept` ("peak_fp64_gflops 12.5 measured, 40.1 kept").
json store(const std::string& path, const std::string& name, const json& entry,
           std::vector<std::string>* kept = nullptr);
// The current UTC time, "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now();

}  // namespace numpipe::calibrate
