// integrate: the collective spouse pension reserve (GF820) of every policy in a
// stream, by three nested RK4 integrations (kernels/integrate).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/parallel.hpp"
#include "common/profile.hpp"
#include "common/progress.hpp"
#include "kernels/integrate/integrate.hpp"

namespace ig = numpipe::integrate;
using numpipe::fail_input;
using numpipe::json;
using numpipe::Record;

namespace {

struct Group {
  const Record* policies = nullptr;
  const Record* steps = nullptr;
  const Record* curve = nullptr;
};

// Groups: each "policies" record starts one; "steps" and "curve" belong to the last.
std::vector<Group> group_records(const std::vector<Record>& records) {
  std::vector<Group> groups;
  for (const Record& r : records) {
    if (r.name == "policies") {
      groups.push_back({&r, nullptr, nullptr});
    } else if (r.name == "steps" || r.name == "curve") {
      if (groups.empty()) fail_input("record '" + r.name + "' comes before any 'policies' record");
      const Record*& slot = r.name == "steps" ? groups.back().steps : groups.back().curve;
      if (slot) fail_input("two '" + r.name + "' records in one group");
      slot = &r;
    }
  }
  if (groups.empty()) fail_input("the input holds no 'policies' record (make one with gen-input integrate)");
  return groups;
}

ig::Problem make_problem(const Group& gr, bool align) {
  const Record& pol = *gr.policies;
  if (pol.shape.size() != 2 || pol.shape[1] != 3)
    fail_input("'policies' must have shape [N, 3] (g, r, x), got " + numpipe::shape_string(pol.shape));
  std::size_t n = static_cast<std::size_t>(pol.shape[0]);
  if (!gr.steps) fail_input("no 'steps' record after 'policies'");
  const Record& st = *gr.steps;
  if (st.shape.size() != 2 || st.shape[0] != pol.shape[0] || st.shape[1] != 3)
    fail_input("'steps' must have shape [" + std::to_string(n) + ", 3] (h1, h2, h3), got " +
               numpipe::shape_string(st.shape));
  ig::Problem pb;
  pb.align_breaks = align;
  if (pol.attrs.contains("rate")) {
    if (!pol.attrs["rate"].is_number()) fail_input("'policies' attrs: rate must be a number");
    pb.rate = pol.attrs["rate"].get<double>();
  }
  pb.policies.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    ig::Policy& p = pb.policies[i];
    p.g = pol.value_as_double(3 * i);
    p.r = pol.value_as_double(3 * i + 1);
    p.x = pol.value_as_double(3 * i + 2);
    int* hs[3] = {&p.h1, &p.h2, &p.h3};
    for (int j = 0; j < 3; ++j) {
      double v = st.value_as_double(3 * i + j);
      if (!(v >= 1 && v <= ig::kMaxStepsPerYear) || v != std::floor(v))
        fail_input("policy " + std::to_string(i) + ": steps per year must be whole numbers in [1, " +
                   std::to_string(ig::kMaxStepsPerYear) + "]: " + std::to_string(v));
      *hs[j] = static_cast<int>(v);
    }
  }
  if (gr.curve) {
    const Record& c = *gr.curve;
    if (c.shape.size() != 2 || c.shape[1] != 2)
      fail_input("'curve' must have shape [N, 2] (maturity, rate), got " + numpipe::shape_string(c.shape));
    for (std::size_t i = 0; i < static_cast<std::size_t>(c.shape[0]); ++i) {
      pb.curve.maturity.push_back(c.value_as_double(2 * i));
      pb.curve.rate.push_back(c.value_as_double(2 * i + 1));
    }
  }
  ig::validate(pb);
  return pb;
}

// --repeat: the run above was the warm-up; N more, median per phase and of the total.
template <class Solve>
void report_repeats(const ig::Problem& pb, const ig::Result& first, int repeat, Solve&& solve) {
  std::vector<std::vector<double>> times(first.log.phases().size() + 1);
  for (int i = 0; i < repeat; ++i) {
    numpipe::HostTimer wall;
    ig::Result r = solve();
    double w = wall.seconds();
    const auto& ph = r.log.phases();
    for (std::size_t j = 0; j < ph.size() && j < times.size() - 1; ++j) times[j].push_back(ph[j].seconds);
    times.back().push_back(w);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  std::fprintf(stderr, "integrate: %zu policies, %d runs after a warm-up, median seconds:", pb.policies.size(), repeat);
  double kernels = 0, inner = 0, flops = 0, fl[3] = {0, 0, 0};
  const char* levels[3] = {"inner", "middle", "outer"};
  for (std::size_t j = 0; j + 1 < times.size(); ++j) {
    double m = median(times[j]);
    const auto& ph = first.log.phases()[j];
    for (int l = 0; l < 3; ++l)
      if (ph.name.rfind(levels[l], 0) == 0) {
        kernels += m;
        fl[l] += ph.flops;
        flops += ph.flops;
      }
    if (ph.name.rfind("inner", 0) == 0) inner += m;
    std::fprintf(stderr, " %s %.6g", ph.name.c_str(), m);
  }
  double wall = median(times.back());
  std::fprintf(stderr, " | compute %.6g | wall %.6g\n", kernels, wall);
  if (first.table)
    std::fprintf(stderr,
                 "integrate: table plan: %zu table rows, inner RK4 steps %.6g; %zu Middle values for %zu outer stage "
                 "points\n",
                 first.columns, first.inner_steps, first.middle_values, first.requests);
  else
    std::fprintf(stderr, "integrate: inner RK4 steps %.6g (unshared %.6g), columns %zu, middle calls %zu\n",
                 first.inner_steps, first.inner_steps_unshared, first.columns, first.requests);
  if (flops > 0 && wall > 0 && kernels > 0)
    std::fprintf(stderr,
                 "integrate: counted flops %.6g GFLOP (inner %.4g, middle %.4g, outer %.4g): %.4g GFLOP/s over the "
                 "whole solve (wall), %.4g GFLOP/s over the kernels\n",
                 flops * 1e-9, fl[0] * 1e-9, fl[1] * 1e-9, fl[2] * 1e-9, flops / wall * 1e-9, flops / kernels * 1e-9);
  if (!first.table && inner > 0)
    std::fprintf(stderr,
                 "integrate: inner phase %.4g G RK4 steps/s, %.4g GFLOP/s (%g flops/step); unshared-equivalent "
                 "%.4g G steps/s over the compute time\n",
                 first.inner_steps / inner * 1e-9, first.inner_steps * ig::kFlopsPerInnerStep / inner * 1e-9,
                 ig::kFlopsPerInnerStep, first.inner_steps_unshared / kernels * 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
  return numpipe::run_tool("integrate", [&] {
    numpipe::Cli cli({"integrate",
                      "Collective spouse pension reserve (GF820) by nested RK4, per policy and whole year",
                      "",
                      "  gen-input integrate --g 10 --r 65 --x 35 --steps 10,2,10 | integrate | inspect\n"
                      "  gen-input integrate --portfolio 1000 --seed 1 | integrate --backend cuda -o reserve.nps",
                      "the policies with their reserves (reserve, reserve0)"},
                     numpipe::kInput | numpipe::kOutput | numpipe::kCompute | numpipe::kProfile |
                         numpipe::kMultiDevice);
    cli.add("Integrate")("align-breaks",
                         "Put step boundaries at every break of the integrands (s = k, eta = 120 - k, "
                         "tau = r, r + g, 15, whole years): 4th-order convergence instead of 1st")(
        "repeat", "Benchmark: after the run (the warm-up), solve N more times; median phase times and rates on stderr",
        cxxopts::value<int>()->default_value("1"), "N");
    cli.tuning_env("NUMPIPE_INTEGRATE_RESULT=host|device",
                   "CUDA table plan: how the result reaches the host (docs/integrate.md); the same bits");
    cli.parse(argc, argv);
    bool align = cli.has("align-breaks");
    int repeat = cli.get<int>("repeat");
    if (repeat < 1 || repeat > 1000) fail_input("--repeat must be in [1, 1000]: " + std::to_string(repeat));
    numpipe::Backend backend = cli.backend();
    // Under MPI (mpirun -np P integrate ...) rank 0 reads and writes; each rank solves
    // a contiguous share of every group's policies on its own GPU (node-local rank).
    auto& world = numpipe::par::world();
    std::vector<int> devices = cli.devices();
    if (world.distributed() && backend == numpipe::Backend::cuda && !cli.has("devices"))
      devices = {numpipe::par::default_device_for_rank(cli.device(), cli.args().count("device") > 0,
                                                       numpipe::cuda_device_count())};
    std::unique_ptr<numpipe::OutputFile> out;
    if (world.is_root()) out = std::make_unique<numpipe::OutputFile>(cli.output());  // refuse a terminal first
    auto records = world.read_input(cli);
    auto groups = group_records(records);
    std::vector<ig::Problem> problems;
    for (const Group& g : groups) problems.push_back(make_problem(g, align));

    std::uint64_t my_policies = 0;  // this rank's, for the progress line
    for (const auto& pb : problems)
      my_policies += numpipe::par::split_evenly(pb.policies.size(), world.size(), world.rank()).size();
    numpipe::Progress progress("integrate", "policies", my_policies, cli.quiet());
    std::uint64_t policies_done = 0;
    numpipe::MemorySink discard;  // ranks other than 0 write nothing
    numpipe::StreamWriter writer(out ? static_cast<numpipe::ByteSink&>(*out) : discard);
    numpipe::PhaseLog log;
    double inner_steps = 0, unshared = 0;
    bool table_plan = false;
    std::size_t npol = 0;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const ig::Problem& whole = problems[gi];
      // This rank's policies; a policy's reserve does not depend on the others in its batch.
      numpipe::par::Range mine = numpipe::par::split_evenly(whole.policies.size(), world.size(), world.rank());
      ig::Problem pb = whole;
      pb.policies.assign(whole.policies.begin() + static_cast<std::ptrdiff_t>(mine.begin),
                         whole.policies.begin() + static_cast<std::ptrdiff_t>(mine.end));
      auto solve = [&] {
#ifdef NUMPIPE_HAVE_CUDA
        if (backend == numpipe::Backend::cuda) return ig::solve_cuda(pb, devices);
#endif
        return ig::solve_cpu(pb, cli.threads());
      };
      ig::Result res;
      if (!pb.policies.empty()) {
        // The CPU plan reports its work as a share of the whole line: with one group only
        // (several groups move the line group by group).
        std::optional<numpipe::ActiveProgress> active;
        if (groups.size() == 1) active.emplace(progress);
        res = solve();
      }
      policies_done += pb.policies.size();
      progress.update(policies_done);
      if (cli.has("repeat") && !pb.policies.empty()) report_repeats(pb, res, repeat, solve);
      if (world.distributed()) {
        std::vector<double> all = world.gather_concat(std::vector<double>(res.reserve.begin(), res.reserve.end()));
        res.reserve.assign(all.begin(), all.end());
        std::vector<double> counts = world.gather_concat(std::vector<double>{res.inner_steps, res.inner_steps_unshared});
        res.inner_steps = res.inner_steps_unshared = 0;
        for (std::size_t k = 0; k + 1 < counts.size(); k += 2) {
          res.inner_steps += counts[k];
          res.inner_steps_unshared += counts[k + 1];
        }
        if (!world.is_root()) continue;
      }
      for (const auto& ph : res.log.phases()) log.add(ph.name, ph.seconds, ph.bytes, ph.flops);
      table_plan = table_plan || res.table;
      inner_steps += res.inner_steps;
      unshared += res.inner_steps_unshared;
      npol += whole.policies.size();
      std::size_t n = whole.policies.size();
      std::vector<double> year0(n);
      for (std::size_t i = 0; i < n; ++i) year0[i] = res.reserve[i * ig::kYears];
      const Record& pol = *groups[gi].policies;
      json attrs = {{"kind", "integrate.reserve"},
                    {"units", "currency units per unit of yearly pension"},
                    {"align_breaks", align},
                    {"backend", numpipe::backend_name(backend)},
                    {"rate", pb.curve.empty() ? json(pb.rate) : json("curve")},
                    {"inner_steps", res.inner_steps}};
      if (world.distributed()) {
        attrs["ranks"] = world.size();
      } else if (res.table) {
        attrs["plan"] = "table";
        attrs["table_rows"] = res.columns;
        attrs["middle_values"] = res.middle_values;
      } else {
        attrs["plan"] = "columns";
        attrs["inner_columns"] = res.columns;  // a count; "columns" is a table's list of column names
      }
      json stamped = cli.stamp(attrs, pol.attrs);
      writer.write(pol.name, pol.dtype, pol.shape, pol.payload.data(), pol.attrs);
      const Record& st = *groups[gi].steps;
      writer.write(st.name, st.dtype, st.shape, st.payload.data(), st.attrs);
      if (groups[gi].curve) {
        const Record& c = *groups[gi].curve;
        writer.write(c.name, c.dtype, c.shape, c.payload.data(), c.attrs);
      }
      json a_res = stamped;
      a_res["layout"] = "[policy, year]: reserve at t = 0..120 years from now; NaN past 120 - x";
      writer.write<double>("reserve", {static_cast<std::int64_t>(n), ig::kYears}, res.reserve.data(), a_res);
      json a0 = stamped;
      a0["layout"] = "[policy]: reserve at t = 0";
      writer.write<double>("reserve0", {static_cast<std::int64_t>(n)}, year0.data(), a0);
    }
    progress.finish();
    if (!world.is_root()) return 0;
    writer.finish();
    out->commit();

    numpipe::DeviceInfo dev = backend == numpipe::Backend::cuda ? numpipe::query_cuda_device(devices.front())
                                                                : numpipe::query_host_cpu();
    json params = {{"policies", npol},
                   {"groups", groups.size()},
                   {"align_breaks", align},
                   {"devices", devices.size()},
                   {"ranks", world.size()},
                   {"plan", table_plan ? "table" : "columns"},
                   {"inner_steps", inner_steps},
                   {"inner_steps_unshared", unshared},
                   {"flops_per_inner_step", ig::kFlopsPerInnerStep}};
    numpipe::write_profile_if_requested(cli, backend, dev, params, log);
    return 0;
  });
}
