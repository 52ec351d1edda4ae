#include "profile.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "cli.hpp"
#include "timeline.hpp"

namespace numpipe {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}
}  // namespace

std::vector<Phase> whole_process_phases(const PhaseLog& log, json* process_names, double* wall_seconds) {
  // The process's phases around the tool's: start-up, reading, waiting for the
  // CUDA context before them; writing after; what none of them covers last.
  static const char* const kBefore[] = {"start-up", "read input", "cuda start-up"};
  const std::vector<timeline::Entry> process = timeline::phases();
  const double wall = timeline::now();
  std::vector<Phase> out;
  json names = json::array();
  auto take = [&](const timeline::Entry& e) {
    out.push_back({e.name, e.seconds, e.bytes, 0});
    names.push_back(e.name);
  };
  for (const char* name : kBefore)
    for (const auto& e : process)
      if (e.name == name) take(e);
  for (const auto& p : log.phases()) out.push_back(p);
  for (const auto& e : process)
    if (std::find(std::begin(kBefore), std::end(kBefore), e.name) == std::end(kBefore)) take(e);
  double covered = 0;
  for (const auto& p : out) covered += p.seconds;
  out.push_back({"other (host)", std::max(0.0, wall - covered), 0, 0});
  names.push_back("other (host)");
  if (process_names) *process_names = names;
  if (wall_seconds) *wall_seconds = wall;
  return out;
}

Record make_profile_record(const Cli& cli, Backend backend, const DeviceInfo& device, const json& params,
                           const PhaseLog& log) {
  const std::vector<Phase>& phases = log.phases();
  json names = json::array();
  for (const auto& p : phases) names.push_back(p.name);
  json attrs = {{"kind", "profile"},
                {"tool", cli.spec().name},
                {"version", numpipe_version()},
                {"commit", numpipe_commit()},
                {"command", cli.command_line()},
                {"backend", backend_name(backend)},
                {"device", device.to_json()},
                {"params", params.is_null() ? json::object() : params},
                {"phases", names},
                {"columns", {"seconds", "bytes", "flops"}},
                {"date", utc_now_iso()},
                {"host", host_name()}};
  Record r = Record::make("profile", DType::f8, {static_cast<std::int64_t>(phases.size()), 3}, attrs);
  double* v = r.data<double>();
  for (std::size_t i = 0; i < phases.size(); ++i) {
    v[3 * i + 0] = phases[i].seconds;
    v[3 * i + 1] = phases[i].bytes;
    v[3 * i + 2] = phases[i].flops;
  }
  return r;
}

void append_stream(const std::string& path, const std::vector<Record>& records) {
  MemorySink sink;
  {
    StreamWriter writer(sink);
    for (const auto& r : records) writer.write(r);
    writer.finish();
  }
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail_resource("cannot open profile file '" + path + "': " + std::strerror(errno));
  const char* p = sink.bytes.data();
  std::size_t left = sink.bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      fail_resource("cannot append to profile file '" + path + "': " + std::strerror(err));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (close(fd) != 0) fail_resource("cannot append to profile file '" + path + "': " + std::strerror(errno));
}

void write_profile_if_requested(const Cli& cli, Backend backend, const DeviceInfo& device, const json& params,
                                const PhaseLog& log) {
  std::string path = cli.profile_path();
  if (path.empty()) return;
  wait_device_release();  // a device released in the background: the wait is a phase of the process
  // The whole process: the tool's phases between the process's (start-up, reading,
  // the CUDA context, writing, the rest).
  json process_names;
  double wall = 0;
  PhaseLog whole;
  for (const Phase& p : whole_process_phases(log, &process_names, &wall)) whole.add(p.name, p.seconds, p.bytes, p.flops);
  std::vector<Record> records;
  records.push_back(make_profile_record(cli, backend, device, params, whole));
  json& attrs = records.back().attrs;
  attrs["process_phases"] = process_names;
  attrs["wall_seconds"] = wall;
  attrs["solve_seconds"] = log.total_seconds();
  const CudaStartup cuda = cuda_startup();
  if (cuda.started)
    attrs["cuda_startup"] = {{"driver_seconds", cuda.driver_seconds}, {"context_seconds", cuda.context_seconds}};
  append_stream(path, records);
}

}  // namespace numpipe
