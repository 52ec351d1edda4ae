// mle-fit: rolling grid maximum-likelihood fits of the asymmetric exponential
// power distribution (kernels/mle; spec ../shared/spec/mle-fit.md).
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "common/cli.hpp"
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
          kInput | kOutput | kCompute | kMultiDevice | kProfile);
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
  PhaseLog log;
  HostTimer t_read;
  std::vector<Record> records = world.read_input(cli);
  log.add("read", t_read.seconds());

  const Record* xr = nullptr;
  for (const Record& r : records)
    if (r.name == "x") {
      xr = &r;
      break;
    }
  if (!xr) fail_input("the input holds no array 'x' (make one with: gen-input mle)");
  if (xr->shape.size() != 1 && xr->shape.size() != 2)
    fail_input("x: expected shape [length] or [series, length], got " + shape_string(xr->shape));
  std::vector<double> x = xr->to_vector<double>();
  mle::Series s;
  s.x = x.data();
  s.series = xr->shape.size() == 2 ? xr->shape[0] : 1;
  s.length = xr->shape.back();
  mle::validate(s, params);

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
  HostTimer t_write;
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
  out->commit();
  log.add("write", t_write.seconds());
  json prof = {{"window", params.window}, {"step", params.step}, {"series", s.series}, {"length", s.length},
               {"shapes", params.grid.alpha.size()}, {"windows", W}, {"exact", params.exact},
               {"refresh", params.refresh}, {"terms", work.terms}, {"ranks", world.size()}};
  write_profile_if_requested(cli, backend, device, prof, log);
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) { return numpipe::run_tool("mle-fit", [&] { return numpipe::run(argc, argv); }); }
