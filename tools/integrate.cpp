// integrate: the collective spouse pension reserve (GF820) of every policy in a
// stream, by three nested RK4 integrations (kernels/integrate).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/labels.hpp"
#include "common/memory.hpp"
#include "common/progress.hpp"
#include "common/parallel.hpp"
#include "common/profile.hpp"
#include "common/strings.hpp"
#include "common/timeline.hpp"
#include "kernels/integrate/integrate.hpp"
#include "kernels/integrate/units.hpp"

namespace ig = numpipe::integrate;
using numpipe::exact_text;
using numpipe::fail_input;
using numpipe::json;
using numpipe::Record;

namespace {

// Peak resident memory per policy (docs/integrate.md "Memory"), measured on the CPU:
// about 1100 bytes (its records, the reserve at every year) and 36 bytes per point
// of its outer RK4 chain (2 h1 (120 - x) points: the plan's stage points and Middle
// values), 54 KB for a policy of x = 45 at 10 outer steps per year.
constexpr double kBytesPerPolicy = 1100, kBytesPerOuterPoint = 36;

struct Group {
  const Record* policies = nullptr;
  const Record* steps = nullptr;
  const Record* curve = nullptr;
  const Record* products = nullptr;
  const Record* lives = nullptr;
  const Record* marriage = nullptr;
  const Record* spouse_age = nullptr;
  std::vector<const Record*> mortality;  // one per law, in order
  std::vector<const Record*> carried;    // the group's records, in order (written to the output unchanged)
};

// Groups: each "policies" record starts one; the others belong to the last.
std::vector<Group> group_records(const std::vector<Record>& records) {
  std::vector<Group> groups;
  for (const Record& r : records) {
    if (r.name == "policies") {
      groups.push_back({});
      groups.back().policies = &r;
      groups.back().carried.push_back(&r);
      continue;
    }
    const Record** slot = nullptr;
    bool known = true;
    if (r.name == "steps") slot = groups.empty() ? nullptr : &groups.back().steps;
    else if (r.name == "curve") slot = groups.empty() ? nullptr : &groups.back().curve;
    else if (r.name == "products") slot = groups.empty() ? nullptr : &groups.back().products;
    else if (r.name == "lives") slot = groups.empty() ? nullptr : &groups.back().lives;
    else if (r.name == "marriage") slot = groups.empty() ? nullptr : &groups.back().marriage;
    else if (r.name == "spouse_age") slot = groups.empty() ? nullptr : &groups.back().spouse_age;
    else if (r.name != "mortality" && !numpipe::is_labels(r)) known = false;
    if (!known) continue;  // not integrate's (other tools' records pass by)
    if (groups.empty()) fail_input("record '" + r.name + "' comes before any 'policies' record");
    if (r.name == "mortality") groups.back().mortality.push_back(&r);
    if (slot) {
      if (*slot) fail_input("two '" + r.name + "' records in one group");
      *slot = &r;
    }
    groups.back().carried.push_back(&r);
  }
  if (groups.empty()) fail_input("the input holds no 'policies' record (make one with gen-input integrate)");
  return groups;
}

// A record of shape [rows, cols] (cols > 0) or [cols] (rows < 0: 1-D); its values as doubles.
std::vector<double> table_values(const Record& r, std::int64_t rows, std::int64_t cols, const std::string& what) {
  bool ok = rows < 0 ? (r.shape.size() == 1 && r.shape[0] == cols)
                     : (r.shape.size() == 2 && r.shape[1] == cols && (rows == 0 ? r.shape[0] >= 1 : r.shape[0] == rows));
  if (!ok)
    fail_input("'" + r.name + "' must have shape " +
               (rows < 0 ? "[" + std::to_string(cols) + "]"
                         : "[" + (rows == 0 ? std::string("M") : std::to_string(rows)) + ", " + std::to_string(cols) + "]") +
               " (" + what + "), got " + numpipe::shape_string(r.shape));
  std::vector<double> v = r.to_vector<double>();
  return v;
}

std::string attr_string(const Record& r, const std::string& key) {
  if (!r.attrs.contains(key) || !r.attrs[key].is_string()) return "";
  return r.attrs[key].get<std::string>();
}

ig::MortalityLaw read_law(const Record& r, std::size_t index) {
  const std::string law = attr_string(r, "law");
  const std::string name = attr_string(r, "name").empty() ? "law " + std::to_string(index) : attr_string(r, "name");
  if (law == "gompertz-makeham") {
    auto c = table_values(r, -1, 3, "A, B, C");
    return ig::gompertz_makeham(name, c[0], c[1], c[2]);
  }
  if (law == "table") {
    auto v = table_values(r, 0, 2, "age, q or mu");
    ig::MortalityLaw m;
    m.name = name;
    m.table = true;
    m.source = attr_string(r, "source");
    std::string kind;
    if (r.attrs.contains("columns") && r.attrs["columns"].is_array() && r.attrs["columns"].size() == 2 &&
        r.attrs["columns"][1].is_string())
      kind = r.attrs["columns"][1].get<std::string>();
    if (kind != "q" && kind != "mu")
      fail_input("'mortality' record '" + name + "': attrs columns must be [\"age\", \"q\"] or [\"age\", \"mu\"]");
    m.q = kind == "q";
    for (std::size_t i = 0; i < v.size(); i += 2) {
      m.ages.push_back(v[i]);
      m.values.push_back(v[i + 1]);
    }
    return m;
  }
  fail_input("'mortality' record '" + name + "': attrs law must be \"gompertz-makeham\" or \"table\", got '" + law + "'");
}

ig::Problem make_problem(const Group& gr, bool align) {
  const Record& pol = *gr.policies;
  if (pol.shape.size() != 2 || pol.shape[1] != 3)
    fail_input("'policies' must have shape [N, 3] (g, r, x), got " + numpipe::shape_string(pol.shape));
  std::size_t n = static_cast<std::size_t>(pol.shape[0]);
  const std::int64_t rows = pol.shape[0];
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
  if (gr.products) {
    auto v = table_values(*gr.products, rows, 7, "product, term, deferment, premium_term, benefit, premium, equivalence");
    for (std::size_t i = 0; i < n; ++i) {
      ig::Policy& p = pb.policies[i];
      const double* row = v.data() + 7 * i;
      if (!(row[0] >= 0 && row[0] < ig::kProductKinds) || row[0] != std::floor(row[0]))
        fail_input("'products' row " + std::to_string(i) + ": unknown product " + exact_text(row[0]) +
                   " (0 spouse pension, 1 life annuity, 2 term insurance, 3 pure endowment, 4 endowment insurance)");
      if (row[6] != 0 && row[6] != 1)
        fail_input("'products' row " + std::to_string(i) + ": equivalence must be 0 or 1: " + exact_text(row[6]));
      p.product = static_cast<int>(row[0]);
      p.term = row[1];
      p.deferment = row[2];
      p.premium_term = row[3];
      p.benefit = row[4];
      p.premium = row[5];
      p.equivalence = row[6] == 1;
    }
  }
  if (!gr.mortality.empty()) {
    pb.laws.clear();
    for (std::size_t i = 0; i < gr.mortality.size(); ++i) pb.laws.push_back(read_law(*gr.mortality[i], i));
    if (pb.laws.size() == 1) pb.laws.push_back(ig::default_laws()[1]);  // the spouse's by default
  }
  if (gr.lives) {
    auto v = table_values(*gr.lives, rows, 2, "insured, spouse: indices of 'mortality' records");
    for (std::size_t i = 0; i < n; ++i) {
      for (int j = 0; j < 2; ++j)
        if (v[2 * i + j] != std::floor(v[2 * i + j]) || !(v[2 * i + j] >= 0 && v[2 * i + j] < 1e6))
          fail_input("'lives' row " + std::to_string(i) + ": law indices must be whole numbers >= 0: " + exact_text(v[2 * i + j]));
      pb.policies[i].insured = static_cast<int>(v[2 * i]);
      pb.policies[i].spouse = static_cast<int>(v[2 * i + 1]);
    }
  }
  if (gr.marriage) {
    auto v = table_values(*gr.marriage, 0, 2, "age, probability");
    pb.spouse.marriage_table = true;
    for (std::size_t i = 0; i < v.size(); i += 2) {
      pb.spouse.marriage_age.push_back(v[i]);
      pb.spouse.marriage_prob.push_back(v[i + 1]);
    }
  }
  if (gr.spouse_age) {
    const std::string law = attr_string(*gr.spouse_age, "law");
    if (law == "normal") {
      auto v = table_values(*gr.spouse_age, -1, 2, "mean, sd");
      pb.spouse.mean = v[0];
      pb.spouse.sd = v[1];
    } else if (law == "table") {
      auto v = table_values(*gr.spouse_age, 0, 2, "difference, density");
      pb.spouse.age_table = true;
      for (std::size_t i = 0; i < v.size(); i += 2) {
        pb.spouse.age_diff.push_back(v[i]);
        pb.spouse.age_density.push_back(v[i + 1]);
      }
    } else {
      fail_input("'spouse_age' record: attrs law must be \"normal\" or \"table\", got '" + law + "'");
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
  std::fprintf(stderr, "integrate: %zu policies, %d runs after a warm-up, median seconds:", pb.policies.size(), repeat);
  double kernels = 0, inner = 0, flops = 0, fl[3] = {0, 0, 0};
  const char* levels[3] = {"inner", "middle", "outer"};
  for (std::size_t j = 0; j + 1 < times.size(); ++j) {
    double m = numpipe::median_of(times[j]);
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
  double wall = numpipe::median_of(times.back());
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
                      "Reserves of pension and life insurance policies at every whole year: the collective spouse "
                      "pension (GF820) by nested RK4, life annuities, term and endowment insurances by Thiele's "
                      "equation",
                      "",
                      "  gen-input integrate --g 10 --r 65 --x 35 --steps 10,2,10 | integrate | inspect\n"
                      "  gen-input integrate --portfolio 1000 --seed 1 | integrate --backend cuda -o reserve.nps\n"
                      "  gen-input integrate --portfolio 1000 --product mixed --premium equivalence --steps 2,2,2 | integrate -o mixed.nps",
                      "the policies with their reserves (reserve, reserve0)"},
                     numpipe::kInput | numpipe::kOutput | numpipe::kCompute | numpipe::kProfile |
                         numpipe::kMultiDevice | numpipe::kMpi);
    cli.add("Integrate")("faithful-gf820",
                         "The published GF820 scheme, for comparison with it: uniform steps whatever the breaks, "
                         "indicators at the stage points; first order where a break is off the step grid")(
        "align-breaks", "Step boundaries at every break of the integrands (the default; kept for scripts)")(
        "tolerance",
        "Pick the steps per year (the same at every level, replacing the input's) for this accuracy: the "
        "estimated error of every reserve at most TOL of its policy's largest reserve",
        cxxopts::value<double>(), "TOL")(
        "frequency",
        "Annuity and premium payments a year: 1, 2, 4, 12 (discrete sums of 1/M of the yearly amount; sums on "
        "death paid at the end of the 1/M year of death), or continuous",
        cxxopts::value<std::string>()->default_value("continuous"), "M")(
        "timing", "Discrete payments at each period's start (advance, the default) or its end (arrears)",
        cxxopts::value<std::string>(), "advance|arrears")(
        "no-error-estimate", "Skip the error estimate (a second solve at half the steps, about half the cost again)")(
        "repeat", "Benchmark: after the run (the warm-up), solve N more times; median phase times and rates on stderr",
        cxxopts::value<int>()->default_value("1"), "N");
    cli.tuning_env("NUMPIPE_INTEGRATE_RESULT=host|device",
                   "CUDA table plan: how the result reaches the host (docs/integrate.md); the same bits");
    cli.tuning_env("NUMPIPE_INTEGRATE_SPLIT=concurrent|sequential",
                   "CUDA, plain policies mixed with life products: the two parts one after the other (default) "
                   "or at once from two host threads; the same bits");
    cli.tuning_env("NUMPIPE_INTEGRATE_PAGES=early|late",
                   "CUDA, a large result: its pages faulted beside the plan by a quarter of the threads (default) "
                   "or after the launches; the same bits");
    cli.parse(argc, argv);
    if (cli.has("faithful-gf820") && cli.has("align-breaks"))
      fail_input("--faithful-gf820 and --align-breaks contradict each other: choose one");
    bool align = !cli.has("faithful-gf820");
    const bool tolerance = cli.has("tolerance");
    const double tol = tolerance ? cli.get<double>("tolerance") : 0.0;
    if (tolerance && !(tol >= 1e-13 && tol < 1))
      fail_input("--tolerance must be in [1e-13, 1) (relative to the largest reserve): " + numpipe::value_text(tol));
    if (tolerance && cli.has("no-error-estimate")) fail_input("--tolerance needs the error estimate: drop --no-error-estimate");
    const bool estimate = !cli.has("no-error-estimate");
    // Step 1b: the payments' frequency and timing (products.hpp, payment_jump).
    int frequency = 0;
    {
      const std::string f = cli.get<std::string>("frequency");
      if (f == "1" || f == "2" || f == "4" || f == "12") frequency = std::stoi(f);
      else if (f != "continuous") fail_input("--frequency must be 1, 2, 4, 12 or continuous: " + f);
    }
    const std::string timing = cli.has("timing") ? cli.get<std::string>("timing") : "advance";
    if (timing != "advance" && timing != "arrears") fail_input("--timing must be advance or arrears: " + timing);
    if (cli.has("timing") && frequency == 0) fail_input("--timing applies to discrete payments: give --frequency 1, 2, 4 or 12");
    if (frequency > 0 && !align) fail_input("--frequency works in the default scheme: drop --faithful-gf820");
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
    // The groups' records only (the reserves of an earlier run are passed over unread);
    // the memory is checked from each 'policies' header (docs/integrate.md "Memory":
    // per policy its records, the reserve at every year and the solver's plan).
    double policies_seen = 0;
    auto records = world.read_input(cli, [&](const numpipe::RecordHeader& h) {
      static const char* const kGroupNames[] = {"policies", "steps",    "curve",      "products",
                                                 "lives",    "marriage", "spouse_age", "mortality"};
      const bool labels = numpipe::is_labels(h);
      if (!labels && std::find(std::begin(kGroupNames), std::end(kGroupNames), h.name) == std::end(kGroupNames))
        return false;  // as group_records: other tools' records pass by
      if (h.name == "policies" && !h.shape.empty()) {
        policies_seen += static_cast<double>(h.shape[0]);
        numpipe::require_host_memory(
            {std::to_string(static_cast<long long>(policies_seen)) + " policies", policies_seen, kBytesPerPolicy, "policy"});
      }
      return true;
    });
    std::optional<numpipe::timeline::Scope> convert(std::in_place, "convert input");  // the policies and bases, checked
    auto groups = group_records(records);
    std::vector<ig::Problem> problems;
    for (const Group& g : groups) problems.push_back(make_problem(g, align));
    for (ig::Problem& pb : problems) {
      pb.frequency = frequency;
      pb.advance = timing == "advance";
      for (std::size_t i = 0; i < pb.policies.size() && (frequency > 0 || cli.has("timing")); ++i) {
        const ig::Policy& p = pb.policies[i];
        const char* option = cli.has("timing") ? "--timing" : "--frequency";
        if (p.product == ig::kSpousePension)
          fail_input(std::string(option) + " does not apply to the spouse pension (policy " + std::to_string(i) + ")");
        if (cli.has("timing") && p.product != ig::kLifeAnnuity && p.premium == 0 && !p.equivalence)
          fail_input("--timing applies to annuities and premiums: policy " + std::to_string(i) + " has neither");
      }
    }
    if (!align && !cli.quiet() && world.is_root())  // the published scheme as asked, but not silently unstable
      for (const ig::Problem& pb : problems) {
        const std::string warning = ig::faithful_stability_warning(pb);
        if (!warning.empty()) {
          std::fprintf(stderr, "integrate: warning: %s\n", warning.c_str());
          break;
        }
      }
    {  // the plan's memory grows with each policy's outer steps: checked before the solve
      double policies = 0, bytes = 0;
      for (const ig::Problem& pb : problems)
        for (const ig::Policy& p : pb.policies) {
          policies += 1;
          bytes += kBytesPerPolicy + kBytesPerOuterPoint * (2.0 * p.h1 * std::max(0.0, 120 - p.x) + 1);
        }
      if (policies > 0)
        numpipe::require_host_memory({std::to_string(static_cast<long long>(policies)) + " policies", policies,
                                      std::ceil(bytes / policies), "policy (on average at these steps)"});
    }
    convert.reset();

    std::uint64_t total_policies = 0;
    for (const ig::Problem& p : problems)  // this rank's share (rank 0 shows the line)
      total_policies += numpipe::par::split_evenly(p.policies.size(), world.size(), world.rank()).size();
    // The progress line: policies done (the CPU backend reports them as it goes).
    // (common/progress.hpp: on a terminal, without -q, on rank 0; advance() is safe from
    // OpenMP's threads.) Without a line the kernel gets no callback, and counts nothing.
    numpipe::Progress progress("integrate", "policies", total_policies, cli.quiet() || !world.is_root());
    bool counting = true;  // --repeat's runs after the first are not counted
    ig::ProgressFn advance;
    if (progress.enabled()) advance = [&](std::uint64_t k) {
      if (counting) progress.advance(k);
    };
    numpipe::MemorySink discard;  // ranks other than 0 write nothing
    numpipe::StreamWriter writer(out ? static_cast<numpipe::ByteSink&>(*out) : discard);
    writer.set_units(ig::units());
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
        return ig::solve_cpu(pb, cli.threads(), advance);
      };
      auto solve_problem = [&](const ig::Problem& q) {
#ifdef NUMPIPE_HAVE_CUDA
        if (backend == numpipe::Backend::cuda) return ig::solve_cuda(q, devices);
#endif
        return ig::solve_cpu(q, cli.threads(), {});
      };
      // --tolerance: every level at 2, 4, 8, ... steps a year until the estimate holds.
      std::optional<ig::Result> half;
      if (tolerance && !pb.policies.empty()) {
        if (world.distributed()) fail_input("--tolerance works in one process (not under MPI): give --steps instead");
        int steps = 2;
        ig::Result coarse = solve_problem(ig::with_steps(pb, 1));
        for (;;) {
          ig::Problem trial = ig::with_steps(pb, steps);
          ig::Result r = solve_problem(trial);
          const ig::ErrorEstimate e = ig::richardson_estimate(trial, r, coarse);
          if (e.relative <= tol) {
            pb = trial;
            half = std::move(coarse);
            break;
          }
          if (steps * 2 > ig::kMaxStepsPerYear)
            numpipe::fail_input("--tolerance " + numpipe::value_text(tol) + " not reached at " + std::to_string(steps) +
                                " steps a year (estimated error " + numpipe::value_text(e.relative) +
                                " of the largest reserve): ask for less");
          coarse = std::move(r);
          steps *= 2;
        }
      }
      ig::Result res;
      if (!pb.policies.empty()) res = solve();
      std::optional<ig::ErrorEstimate> error;
      if (estimate) {
        error.emplace();
        if (!pb.policies.empty()) {
          if (!half) half = solve_problem(ig::halved_steps(pb));
          error = ig::richardson_estimate(pb, res, *half);
        }
        if (world.distributed()) {  // every rank, in the same order as the gathers below
          std::vector<double> all = world.gather_concat(std::vector<double>{error->absolute, error->relative});
          for (std::size_t k = 0; k + 1 < all.size(); k += 2) {
            error->absolute = std::max(error->absolute, all[k]);
            error->relative = std::max(error->relative, all[k + 1]);
          }
        }
      }
      if (backend == numpipe::Backend::cuda) progress.advance(pb.policies.size());  // the GPU: a group at a time
      counting = false;
      if (cli.has("repeat") && !pb.policies.empty()) report_repeats(pb, res, repeat, solve);
      counting = true;
      if (res.premium.empty()) res.premium.assign(pb.policies.size(), 0.0);
      if (world.distributed()) {
        std::vector<double> all = world.gather_concat(std::vector<double>(res.reserve.begin(), res.reserve.end()));
        res.reserve.assign(all.begin(), all.end());
        res.premium = world.gather_concat(res.premium);
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
                    {"scheme", align ? "aligned" : "faithful-gf820"},
                    {"backend", numpipe::backend_name(backend)},
                    {"rate", pb.curve.empty() ? json(pb.rate) : json("curve")},
                    {"inner_steps", res.inner_steps}};
      if (error) {  // Richardson: this run against one at half the steps
        attrs["error_estimate"] = error->absolute;
        attrs["error_estimate_relative"] = error->relative;
      }
      if (frequency > 0) {  // discrete payments: what the reserves assume
        attrs["frequency"] = frequency;
        attrs["timing"] = timing;
      }
      if (tolerance) {
        attrs["tolerance"] = tol;
        attrs["steps_per_year"] = pb.policies.empty() ? 0 : pb.policies.front().h1;
      }
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
      if (groups[gi].products) {
        std::size_t single = 0;
        for (const ig::Policy& p : whole.policies) single += p.product != ig::kSpousePension;
        attrs["single_life_policies"] = single;
        attrs["units"] = "currency units, the benefits' unit";
      }
      // NaN marks the years a policy's grid does not reach (documented); anything else
      // non-finite, and a NaN at t = 0 (always on the grid), is a bug.
      {
        numpipe::timeline::Scope check("check output");
        const double* reserve = res.reserve.data();
        const std::int64_t bad = numpipe::first_where(n * ig::kYears, [reserve](std::int64_t k) {
          const double v = reserve[k];
          return std::isinf(v) || (k % ig::kYears == 0 && std::isnan(v));
        });
        if (bad >= 0)
          numpipe::fail_internal("reserve[" + std::to_string(bad / ig::kYears) + ", " + std::to_string(bad % ig::kYears) +
                                 "] is " + numpipe::value_text(reserve[bad]) +
                                 ": a reserve came out non-finite (please report the input)");
      }
      json stamped = cli.stamp(attrs, pol.attrs);
      for (const Record* r : groups[gi].carried) writer.write(r->name, r->dtype, r->shape, r->payload.data(), r->attrs);
      json a_res = stamped;
      a_res["layout"] = "[policy, year]: reserve at t = 0..120 years from now; NaN past 120 - x";
      a_res["dims"] = {"policy", "year"};  // a table (policy, year), not a field on a grid: nps-export's rows
      writer.write<double>("reserve", {static_cast<std::int64_t>(n), ig::kYears}, res.reserve.data(), a_res);
      json a0 = stamped;
      a0["layout"] = "[policy]: reserve at t = 0";
      a0["dims"] = {"policy"};
      writer.write<double>("reserve0", {static_cast<std::int64_t>(n)}, year0.data(), a0);
      if (groups[gi].products) {  // the level premium of each policy: as given, or solved for
        json ap = stamped;
        ap["layout"] = "[policy]: the level premium per year (as given, or the equivalence premium)";
        ap["dims"] = {"policy"};
        ap["units"] = "currency units per year";
        writer.write<double>("premium", {static_cast<std::int64_t>(n)}, res.premium.data(), ap);
      }
    }
    progress.finish();
    if (!world.is_root()) return 0;
    writer.finish();

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
    numpipe::write_profile_if_requested(cli, backend, dev, params, log);  // before the commit: a failure leaves no output
    out->commit();
    return 0;
  });
}
