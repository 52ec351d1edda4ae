// mle-fit: rolling grid maximum-likelihood fits of the asymmetric exponential
// power distribution (kernels/mle; spec ../shared/spec/mle-fit.md).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "common/profile.hpp"
#include "kernels/mle/mle.hpp"

namespace numpipe {
namespace {

std::vector<double> parse_levels(const std::string& text) {
  std::vector<double> levels;
  if (text.empty()) return levels;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end || !(v > 0 && v < 1))
      fail_input("--quantiles takes probabilities in (0, 1) separated by commas, got '" + item + "'");
    levels.push_back(v);
  }
  return levels;
}

// The working set (docs/mle.md "Memory"), checked from the header of x before its
// payload is read: per point the record and its copy in double; per window the
// grid fits (44 bytes), the estimates and the output (56 bytes and 8 per level).
void require_mle_memory(const RecordHeader& x, const mle::Params& params, std::size_t levels) {
  if (x.shape.empty() || x.shape.size() > 2) return;  // refused after the read, with the shape
  const double length = static_cast<double>(x.shape.back());
  const double series = x.shape.size() == 2 ? static_cast<double>(x.shape[0]) : 1.0;
  const double windows = length >= static_cast<double>(params.window)
                             ? series * (std::floor((length - double(params.window)) / double(params.step)) + 1)
                             : 0;
  const double per_window = 44 + 56 + 8.0 * static_cast<double>(levels);
  MemoryEstimate e{std::to_string(static_cast<long long>(windows)) + " windows of " + std::to_string(params.window) +
                       " points",
                   windows, per_window, "window"};
  e.fixed = series * length * (static_cast<double>(dtype_size(x.dtype)) + 8);
  require_host_memory(e);
}

// A window whose fit is not finite is refused, but for the documented case of a
// window whose points are all equal (loglik +inf, scales 0, skew NaN).
void require_finite_fits(const mle::Series& s, const mle::Params& params, std::int64_t windows, const mle::Estimates& est,
                         std::size_t levels) {
  const std::pair<const char*, const std::vector<double>*> outputs[] = {
      {"theta", &est.theta}, {"p", &est.p}, {"s_l", &est.s_l}, {"s_r", &est.s_r}, {"loglik", &est.loglik},
      {"skew", &est.skew}};
  const Shape shape{s.series, windows};
  for (std::int64_t w = 0; w < s.series * windows; ++w) {
    const std::size_t i = static_cast<std::size_t>(w);
    bool finite = true;
    for (const auto& o : outputs) finite = finite && std::isfinite((*o.second)[i]);
    for (std::size_t q = 0; q < levels; ++q) finite = finite && std::isfinite(est.quantiles[i * levels + q]);
    if (finite) continue;
    const double* xw = s.x + (w / windows) * s.length + (w % windows) * params.step;
    bool all_equal = true;
    for (std::int64_t k = 1; k < params.window && all_equal; ++k) all_equal = xw[k] == xw[0];
    if (all_equal) continue;
    for (const auto& o : outputs)
      if (!std::isfinite((*o.second)[i]))
        fail_input(std::string(o.first) + index_in(shape, i) + " is " + value_text((*o.second)[i]) +
                   ": the window's fit is not finite (its values, or the --alpha-grid shapes, are beyond the range of doubles)");
    fail_input("quantiles" + index_in(shape, i) +
               " are not finite (the window's values, or the --alpha-grid shapes, are beyond the range of doubles)");
  }
}

std::string level_name(double q) {
  std::ostringstream s;
  s << q;
  return s.str();
}

int run(int argc, char** argv) {
  Cli cli({"mle-fit",
           "Rolling maximum-likelihood fits of the asymmetric exponential power distribution (grid over location and shape)",
           "",
           "  gen-input mle --length 100000 --p 1.5 --sl 1 --sr 2 --seed 7 \\\n"
           "    | mle-fit --window 500 --step 1 --alpha-grid 0.5:4.45:80 --quantiles 0.01,0.05 | inspect\n"
           "  gen-input mle --from-text prices.csv --columns close --returns log | mle-fit --window 250 --quantiles 0.01"},
          kInput | kOutput | kCompute | kMultiDevice | kProfile | kMpi);
  cli.add("Fit")("window", "Points per window (n >= 3)", cxxopts::value<std::int64_t>()->default_value("500"), "N")(
      "step", "A window starts every K points", cxxopts::value<std::int64_t>()->default_value("1"), "K")(
      "alpha-grid", "Shape grid: START:STOP:COUNT (evenly spaced, ends included) or a list a,b,c",
      cxxopts::value<std::string>()->default_value("0.5:4.45:80"), "GRID")(
      "refine", "Refine theta between the neighbouring data points and p between the grid neighbours (golden section)")(
      "exact", "Recompute every window from scratch (the seed's method) instead of rolling updates")(
      "refresh", "Rolling sums are recomputed from scratch at least every R windows",
      cxxopts::value<std::int64_t>()->default_value("1000"), "R")(
      "quantiles", "Quantiles (Value-at-Risk levels) of each fitted distribution, e.g. 0.01,0.05",
      cxxopts::value<std::string>()->default_value(""), "Q,...");
  cli.parse(argc, argv);

  mle::Params params;
  params.window = cli.get<std::int64_t>("window");
  params.step = cli.get<std::int64_t>("step");
  params.refresh = cli.get<std::int64_t>("refresh");
  params.exact = cli.has("exact");
  params.grid = mle::parse_grid(cli.get<std::string>("alpha-grid"));
  const bool refine = cli.has("refine");
  const std::vector<double> levels = parse_levels(cli.get<std::string>("quantiles"));
  if (params.window < 3) fail_input("--window must be >= 3, got " + std::to_string(params.window));
  if (params.step < 1) fail_input("--step must be >= 1, got " + std::to_string(params.step));
  if (params.refresh < 1) fail_input("--refresh must be >= 1, got " + std::to_string(params.refresh));
  const Backend backend = cli.backend();

  // Under MPI (mpirun -np P mle-fit ...) rank 0 reads and writes; the backend's
  // tasks (a series and a chunk of windows each) are split over the ranks in
  // contiguous ranges, each rank on its own GPU (node-local rank).
  auto& world = par::world();
  std::unique_ptr<OutputFile> out;
  if (world.is_root()) out = std::make_unique<OutputFile>(cli.output());  // refuses a terminal before any work
  PhaseLog log;  // the tool's phases; reading and writing are the process's (common/timeline.hpp)
  // x only (one record of that name); the memory is checked from its header.
  const RecordFilter series_record = keep_names_once({"x"});
  std::vector<Record> records = world.read_input(cli, [&](const RecordHeader& h) {
    if (!series_record(h)) return false;
    require_mle_memory(h, params, levels.size());
    return true;
  });

  const Record* xr = records.empty() ? nullptr : &records.front();
  if (!xr) fail_input("the input holds no array 'x' (make one with: gen-input mle)");
  if (xr->shape.size() != 1 && xr->shape.size() != 2)
    fail_input("x: expected shape [length] or [series, length], got " + shape_string(xr->shape));
  std::vector<double> x = xr->to_vector<double>();
  mle::Series s;
  s.x = x.data();
  s.series = xr->shape.size() == 2 ? xr->shape[0] : 1;
  s.length = xr->shape.back();
  mle::validate(s, params);
  // A series so large or small that |x - theta|^p would overflow or underflow
  // (1e150 with p up to 4.45) is fitted scaled by a power of two (exact): theta,
  // the scales and the quantiles are scaled back, loglik shifted by -n log(2^e).
  // Other series (|log2 max|x|| * max p <= 900) are fitted as they are (same bits).
  double max_shape = 1;
  for (double a : params.grid.alpha) max_shape = std::max(max_shape, a);
  std::vector<int> exponent(static_cast<std::size_t>(s.series), 0);
  for (std::int64_t k = 0; k < s.series; ++k) {
    double* xs = x.data() + k * s.length;
    double big = 0;
    for (std::int64_t i = 0; i < s.length; ++i) big = std::max(big, std::fabs(xs[i]));
    if (big == 0 || std::fabs(std::log2(big)) * max_shape <= 900) continue;
    std::frexp(big, &exponent[static_cast<std::size_t>(k)]);
    for (std::int64_t i = 0; i < s.length; ++i) xs[i] = std::ldexp(xs[i], -exponent[static_cast<std::size_t>(k)]);
  }

  const std::int64_t W = mle::window_count(s, params);
  const mle::Work work = mle::work_estimate(s, params);
  // The grid's traffic and flop model (docs/profile.md, "Traffic models"): memory
  // moves the series once and each window's fit (shape, candidate, X-, X+, S,
  // loglik: 44 bytes); the sums stay in cache (CPU) or registers (GPU). Flops: 5 a
  // power term (a ladder multiply, a compensated add), 58 a pair and shape group
  // (two exp at 29).
  const double grid_bytes = 8.0 * static_cast<double>(s.series * s.length) + 44.0 * static_cast<double>(s.series * W);
  const double grid_flops = 5.0 * work.terms + 58.0 * work.pairs;
  mle::WindowFits fits;
  DeviceInfo device;
  // This rank's tasks and windows (all of them in one process).
  std::int64_t task0 = 0, task1 = 0, win0 = 0, win1 = s.series * W;
  auto share = [&](const mle::TaskPlan& plan) {
    const par::Range mine = par::split_evenly(static_cast<std::size_t>(plan.tasks()), world.size(), world.rank());
    task0 = static_cast<std::int64_t>(mine.begin);
    task1 = static_cast<std::int64_t>(mine.end);
    win0 = plan.first_window(task0);
    win1 = plan.first_window(task1);
  };
  if (backend == Backend::cuda) {
#ifdef NUMPIPE_HAVE_CUDA
    std::vector<int> devices = cli.devices();
    if (world.distributed() && !cli.has("devices"))
      devices = {par::default_device_for_rank(cli.device(), cli.args().count("device") > 0, cuda_device_count())};
    device = query_cuda_device(devices.front());
    {  // per window on a device: 12 bytes per shape (the best sums) and 44 of fits (docs/mle.md "Memory")
      const double per_device = double(s.series * W) / double(world.size() * devices.size());
      require_device_memory(devices.front(), {std::to_string(s.series * W) + " windows", per_device,
                                              12.0 * double(params.grid.alpha.size()) + 44, "window", 64.0 * 1048576});
    }
    mle::CudaTiming timing;
    HostTimer t;
    if (world.distributed()) {
      share(mle::cuda_plan(s, params));
      mle::solve_cuda(s, params, devices, task0, task1, fits, &timing);
    } else {
      mle::solve_cuda(s, params, devices, fits, &timing);
    }
    const double total = t.seconds();
    log.add("grid kernels", timing.kernel_seconds, grid_bytes, grid_flops);
    log.add("copies and launch", std::max(0.0, total - timing.kernel_seconds));
#endif
  } else {
    device = query_host_cpu();
    if (world.distributed()) {
      share(mle::cpu_plan(s, params));
      const double mine = static_cast<double>(win1 - win0) / static_cast<double>(std::max<std::int64_t>(1, s.series * W));
      log.time("grid", grid_bytes * mine, grid_flops * mine, [&] { mle::solve_cpu(s, params, task0, task1, fits); });
    } else {
      log.time("grid", grid_bytes, grid_flops, [&] { mle::solve_cpu(s, params, fits); });
    }
  }
  mle::Estimates est;
  log.time("finish", 0, 0, [&] { est = mle::finish(s, params, fits, refine, levels, win0, win1); });
  if (world.distributed()) {  // rank 0: every window, in [series][windows] order
    for (auto* v : {&est.theta, &est.p, &est.s_l, &est.s_r, &est.loglik, &est.skew, &est.quantiles})
      *v = world.gather_concat(*v);
    if (!world.is_root()) return 0;
  }
  for (std::int64_t k = 0; k < s.series; ++k) {  // scaled series back to the data's units
    const int e = exponent[static_cast<std::size_t>(k)];
    if (e == 0) continue;
    for (std::int64_t w = k * W; w < (k + 1) * W; ++w) {
      const std::size_t i = static_cast<std::size_t>(w);
      for (auto* v : {&est.theta, &est.s_l, &est.s_r}) (*v)[i] = std::ldexp((*v)[i], e);
      est.loglik[i] -= static_cast<double>(params.window) * e * std::log(2.0);
      for (std::size_t q = 0; q < levels.size(); ++q)
        est.quantiles[i * levels.size() + q] = std::ldexp(est.quantiles[i * levels.size() + q], e);
    }
    double* xs = x.data() + k * s.length;
    for (std::int64_t i = 0; i < s.length; ++i) xs[i] = std::ldexp(xs[i], e);
  }
  require_finite_fits(s, params, W, est, levels.size());

  json grid_json = params.grid.alpha;
  json attrs = {{"kind", "mle.fit"},
                {"window", params.window},
                {"step", params.step},
                {"windows", W},
                {"series", s.series},
                {"alpha_grid", cli.get<std::string>("alpha-grid")},
                {"shapes", params.grid.alpha.size()},
                {"method", params.exact ? "exact" : "rolling"},
                {"refresh", params.refresh},
                {"refined", refine},
                {"backend", backend_name(backend)},
                {"model", "AEPD: f(x) = p/((s_l+s_r) Gamma(1/p)) exp(-(|x-theta|/s)^p), s = s_l left of theta, s_r right"}};
  if (world.distributed()) attrs["ranks"] = world.size();
  attrs = cli.stamp(attrs, xr->attrs);
  const Shape shape{s.series, W};
  std::vector<std::int64_t> start(static_cast<std::size_t>(W));
  for (std::int64_t w = 0; w < W; ++w) start[static_cast<std::size_t>(w)] = w * params.step;
  StreamWriter writer(*out);
  json a_start = attrs;
  a_start["description"] = "index of each window's first point";
  writer.write("start", Shape{W}, start.data(), a_start);
  auto put = [&](const char* name, const std::vector<double>& v, const char* what) {
    json a = attrs;
    a["description"] = what;
    writer.write(name, shape, v.data(), a);
  };
  put("theta", est.theta, "location estimate");
  put("p", est.p, "shape estimate");
  put("s_l", est.s_l, "left scale");
  put("s_r", est.s_r, "right scale");
  put("loglik", est.loglik, "maximised log-likelihood");
  put("skew", est.skew, "s_l / (s_l + s_r)");
  if (!levels.empty()) {
    json a = attrs;
    a["description"] = "quantiles of the fitted distribution, last axis by level";
    json names = json::array();
    for (double q : levels) names.push_back(level_name(q));
    a["levels"] = levels;
    a["level_names"] = names;
    writer.write("quantiles", Shape{s.series, W, static_cast<std::int64_t>(levels.size())}, est.quantiles.data(), a);
  }
  writer.finish();
  json prof = {{"window", params.window}, {"step", params.step}, {"series", s.series}, {"length", s.length},
               {"shapes", params.grid.alpha.size()}, {"windows", W}, {"exact", params.exact},
               {"refresh", params.refresh}, {"terms", work.terms}, {"ranks", world.size()}};
  write_profile_if_requested(cli, backend, device, prof, log);  // before the commit: a failure leaves no output
  out->commit();
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) { return numpipe::run_tool("mle-fit", [&] { return numpipe::run(argc, argv); }); }
