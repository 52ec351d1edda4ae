// mle-fit: rolling grid maximum-likelihood fits of the asymmetric exponential
// power distribution (kernels/mle; spec ../shared/spec/mle-fit.md).
#include <cstdio>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "common/cli.hpp"
#include "common/progress.hpp"
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
           "  gen-input mle --from-text share/ref/mle-prices.csv --columns close --returns log | mle-fit --window 250 --quantiles 0.01 -o var.nps",
           "the fits of every window (theta, p, s_l, s_r, loglik, skew, start; quantiles)"},
          kInput | kOutput | kCompute | kMultiDevice | kProfile);
  cli.add("Fit")("window", "Points per window (n >= 3)", cxxopts::value<std::int64_t>()->default_value("500"), "N")(
      "step", "A window starts every K points", cxxopts::value<std::int64_t>()->default_value("1"), "K")(
      "alpha-grid", "Shape grid: START:STOP:COUNT (evenly spaced, ends included) or a list a,b,c",
      cxxopts::value<std::string>()->default_value("0.5:4.45:80"), "GRID")(
      "refine", "Refine theta between the neighbouring data points and p between the grid neighbours (golden section)")(
      "exact", "Recompute every window from scratch instead of rolling updates (for checking)")(
      "refresh", "Rolling sums are recomputed from scratch at least every R windows",
      cxxopts::value<std::int64_t>()->default_value("1000"), "R")(
      "quantiles", "Quantiles (Value-at-Risk levels) of each fitted distribution, e.g. 0.01,0.05",
      cxxopts::value<std::string>()->default_value(""), "Q,...")(
      "repeat", "Benchmark: after the run, fit N more times; the median time of the grid search on stderr",
      cxxopts::value<int>()->default_value("0"), "N");
  cli.tuning_env("NUMPIPE_MLE_GROUP=4|8", "CUDA: shapes per block of the grid kernels (default 8)");
  cli.tuning_env("NUMPIPE_MLE_PRESCREEN=0", "CUDA: evaluate every candidate exactly (no single-precision prescreen); "
                 "the same bits");
  cli.parse(argc, argv);
  const int repeat = cli.get<int>("repeat");
  if (repeat < 0 || repeat > 1000) fail_input("--repeat must be in [0, 1000], got " + std::to_string(repeat));

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
  std::vector<double> repeat_seconds;  // --repeat
  std::unique_ptr<Progress> progress;  // windows, made once this rank's share is known
  auto start_progress = [&] {
    progress = std::make_unique<Progress>("mle-fit", "windows", static_cast<std::uint64_t>(win1 - win0), cli.quiet());
  };
  if (backend == Backend::cuda) {
#ifdef NUMPIPE_HAVE_CUDA
    std::vector<int> devices = cli.devices();
    if (world.distributed() && !cli.has("devices"))
      devices = {par::default_device_for_rank(cli.device(), cli.args().count("device") > 0, cuda_device_count())};
    device = query_cuda_device(devices.front());
    mle::CudaTiming timing;
    HostTimer t;
    if (world.distributed()) share(mle::cuda_plan(s, params));
    start_progress();
    auto solve = [&](mle::WindowFits& f, mle::CudaTiming* tm) {
      if (world.distributed())
        mle::solve_cuda(s, params, devices, task0, task1, f, tm);
      else
        mle::solve_cuda(s, params, devices, f, tm);
    };
    solve(fits, &timing);
    const double total = t.seconds();
    for (int r = 0; r < repeat; ++r) {
      mle::WindowFits again;
      mle::CudaTiming tm;
      solve(again, &tm);
      repeat_seconds.push_back(tm.kernel_seconds);
    }
    log.add("grid kernels", timing.kernel_seconds, grid_bytes, grid_flops);
    log.add("copies and launch", std::max(0.0, total - timing.kernel_seconds));
#endif
  } else {
    device = query_host_cpu();
    if (world.distributed()) share(mle::cpu_plan(s, params));
    start_progress();
    auto solve = [&](mle::WindowFits& f) {
      if (world.distributed())
        mle::solve_cpu(s, params, task0, task1, f);
      else
        mle::solve_cpu(s, params, f);
    };
    // Under MPI the bytes and flops of this rank's share.
    const double mine = world.distributed()
                            ? static_cast<double>(win1 - win0) / static_cast<double>(std::max<std::int64_t>(1, s.series * W))
                            : 1.0;
    log.time("grid", grid_bytes * mine, grid_flops * mine, [&] {
      ActiveProgress active(*progress);  // the CPU loop counts windows as they finish
      solve(fits);
    });
    for (int r = 0; r < repeat; ++r) {
      mle::WindowFits again;
      HostTimer timer;
      solve(again);
      repeat_seconds.push_back(timer.seconds());
    }
  }
  if (progress) {
    progress->update(static_cast<std::uint64_t>(win1 - win0));
    progress->finish();
  }
  if (!repeat_seconds.empty() && world.is_root()) {
    std::sort(repeat_seconds.begin(), repeat_seconds.end());
    const std::size_t n = repeat_seconds.size();
    const double median = n % 2 ? repeat_seconds[n / 2] : 0.5 * (repeat_seconds[n / 2 - 1] + repeat_seconds[n / 2]);
    std::fprintf(stderr, "mle-fit: %lld windows (%s): %d runs after the first, median grid search %.4f ms, %.4g us/window\n",
                 static_cast<long long>(win1 - win0), backend_name(backend), repeat, median * 1e3,
                 win1 > win0 ? median / static_cast<double>(win1 - win0) * 1e6 : 0.0);
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
