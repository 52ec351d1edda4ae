// integrate: the collective spouse pension reserve (GF820) of every policy in a
// stream, by three nested RK4 integrations, and single-life products by Thiele's
// equation (kernels/integrate: the model, the backends, io.hpp the records).
#include <optional>
#include <string>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/progress.hpp"
#include "common/run.hpp"
#include "common/timeline.hpp"
#include "kernels/integrate/io.hpp"
#include "kernels/integrate/tuning.hpp"
#include "kernels/integrate/units.hpp"

int main(int argc, char** argv) {
  using namespace numpipe;
  namespace ig = numpipe::integrate;
  return run_tool("integrate", [&] {
    // 1. The options, each declared once with its checks (applied by cli.parse).
    Cli cli({"integrate",
             "Reserves of pension and life insurance policies at every whole year: the collective spouse pension "
             "(GF820) by nested RK4, life annuities (on one life or two), term and endowment insurances by Thiele's equation",
             "",
             "  gen-input integrate --g 10 --r 65 --x 35 --steps 10,2,10 | integrate | inspect\n"
             "  gen-input integrate --portfolio 1000 --seed 1 | integrate --backend cuda -o reserve.nps\n"
             "  gen-input integrate --portfolio 1000 --product mixed --premium equivalence --steps 2,2,2 | integrate -o mixed.nps",
             "the policies with their reserves (reserve, reserve0)"},
            kInput | kOutput | kCompute | kProfile | kMultiDevice | kMpi);
    bool faithful = false, aligned = false, no_estimate = false, want_cash_flows = false, want_duration = false;
    std::optional<double> tolerance;
    std::string frequency_text = "continuous";
    std::optional<std::string> timing;
    std::optional<int> repeat;
    cli.flag("faithful-gf820", &faithful,
             "The published GF820 scheme, for comparison with it: uniform steps whatever the breaks, indicators at the "
             "stage points; first order where a break is off the step grid",
             "Integrate");
    cli.flag("align-breaks", &aligned, "Step boundaries at every break of the integrands (the default; kept for scripts)",
             "Integrate");
    cli.option("tolerance", &tolerance,
               "Pick the steps per year (the same at every level, replacing the input's) for this accuracy: the "
               "estimated error of every reserve at most TOL of its policy's largest reserve",
               "TOL", "Integrate")
        .check([](double tol) {
          if (!(tol >= 1e-13 && tol < 1))
            fail_input("--tolerance must be in [1e-13, 1) (relative to the largest reserve): " + value_text(tol));
        });
    cli.option("frequency", &frequency_text,
               "Annuity and premium payments a year: 1, 2, 4, 12 (discrete sums of 1/M of the yearly amount; sums on "
               "death paid at the end of the 1/M year of death), or continuous",
               "M", "Integrate")
        .one_of({"1", "2", "4", "12", "continuous"});
    cli.option("timing", &timing, "Discrete payments at each period's start (advance, the default) or its end (arrears)",
               "advance|arrears", "Integrate")
        .one_of({"advance", "arrears"});
    cli.flag("no-error-estimate", &no_estimate,
             "Skip the error estimate (a second solve at half the steps, about half the cost again)", "Integrate");
    cli.flag("cash-flows", &want_cash_flows,
             "Also write each policy's expected cash flows by year (record cash_flow: benefits paid and premiums "
             "received, weighted by the survival probabilities, undiscounted)",
             "Valuation");
    cli.flag("duration", &want_duration,
             "Also write each reserve's effective duration -(1/V) dV/dr for a parallel shift of the rate, premiums "
             "held (records duration, reserve_rate_derivative; two more solves)",
             "Valuation");
    BatchRun::declare(cli, &repeat, "Integrate");
    ig::declare_tuning(cli);
    // 2. Parse: every value checked; then the checks that join options.
    cli.parse(argc, argv);
    if (faithful && aligned) fail_input("--faithful-gf820 and --align-breaks contradict each other: choose one");
    const bool align = !faithful, estimate = !no_estimate;
    if (tolerance && no_estimate) fail_input("--tolerance needs the error estimate: drop --no-error-estimate");
    const int frequency = frequency_text == "continuous" ? 0 : std::stoi(frequency_text);
    if (timing && frequency == 0) fail_input("--timing applies to discrete payments: give --frequency 1, 2, 4 or 12");
    if (frequency > 0 && !align) fail_input("--frequency works in the default scheme: drop --faithful-gf820");
    // 3. The run: under MPI rank 0 reads and writes, each rank solves a contiguous
    // share of every group's policies on its own GPU.
    BatchRun run(cli, repeat);
    auto& world = run.world();
    if ((want_cash_flows || want_duration) && world.distributed())
      fail_input("--cash-flows and --duration work in one process (not under MPI)");
    const ig::Engine engine{run.cuda(), run.devices(), cli.threads()};

    // 4. Read: the groups' records into problems, checked, and the memory they need.
    const std::vector<Record> records = run.read(ig::input_filter());
    std::optional<timeline::Scope> convert(std::in_place, "convert input");  // the policies and bases, checked
    const std::vector<ig::Group> groups = ig::group_records(records);
    std::vector<ig::Problem> problems;
    for (const ig::Group& g : groups) problems.push_back(ig::make_problem(g, align));
    ig::set_payments(problems, frequency, timing.value_or("advance") == "advance", timing.has_value());
    if (!align && !cli.quiet() && world.is_root()) ig::warn_if_unstable(problems);  // as asked, but not silently
    ig::require_plan_memory(problems);
    convert.reset();

    // 5. Solve each group: this rank's policies (a policy's reserve does not depend on
    // the others), the steps for --tolerance, the error estimate; gathered on rank 0.
    std::uint64_t my_policies = 0;
    for (const ig::Problem& p : problems) my_policies += run.share(p.policies.size()).size();
    // The progress line (policies; the CPU backend reports them as it goes, from any
    // thread); --repeat's runs after the first are not counted.
    Progress progress("integrate", "policies", my_policies, cli.quiet() || !world.is_root());
    bool counting = true;
    ig::ProgressFn advance;
    if (progress.enabled()) advance = [&](std::uint64_t k) {
      if (counting) progress.advance(k);
    };
    PhaseLog log;
    ig::Totals totals;
    totals.groups = groups.size();
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const ig::Problem& whole = problems[gi];
      const par::Range mine = run.share(whole.policies.size());
      ig::Problem pb = whole;
      pb.policies.assign(whole.policies.begin() + static_cast<std::ptrdiff_t>(mine.begin),
                         whole.policies.begin() + static_cast<std::ptrdiff_t>(mine.end));
      std::optional<ig::Result> half;
      if (tolerance && !pb.policies.empty()) {
        if (world.distributed()) fail_input("--tolerance works in one process (not under MPI): give --steps instead");
        pb = ig::steps_for_tolerance(pb, *tolerance, engine, half.emplace());
      }
      ig::Result res;
      if (!pb.policies.empty()) res = ig::solve(pb, engine, advance);
      std::optional<ig::ErrorEstimate> error;
      if (estimate) {
        error.emplace();
        if (!pb.policies.empty()) {
          if (!half) half = ig::solve(ig::halved_steps(pb), engine);
          error = ig::richardson_estimate(pb, res, *half);
        }
        // every rank, in the same order as the gathers below: the largest of any rank
        const std::vector<double> all = run.gather(std::vector<double>{error->absolute, error->relative});
        for (std::size_t k = 0; k + 1 < all.size(); k += 2) {
          error->absolute = std::max(error->absolute, all[k]);
          error->relative = std::max(error->relative, all[k + 1]);
        }
      }
      if (run.cuda()) progress.advance(pb.policies.size());  // the GPU: a group at a time
      counting = false;
      if (run.repeat() > 0 && !pb.policies.empty())
        ig::report_repeats(pb, res, run.repeat(), [&] { return ig::solve(pb, engine, advance); });
      counting = true;
      if (res.premium.empty()) res.premium.assign(pb.policies.size(), 0.0);
      ig::Valuation valuation;  // with the premiums as solved
      if (want_cash_flows && !pb.policies.empty()) valuation.cash_flow = ig::cash_flows(pb, res.premium, engine);
      if (want_duration && !pb.policies.empty()) valuation.sensitivity = ig::rate_sensitivity(pb, res, engine);
      if (world.distributed()) {
        ig::gather_result(run, res);
        if (!world.is_root()) continue;
      }
      for (const auto& ph : res.log.phases()) log.add(ph.name, ph.seconds, ph.bytes, ph.flops);
      totals.add(res, whole.policies.size());
      ig::check_reserves(res, whole.policies.size());
      const json attrs = ig::reserve_attrs(groups[gi], whole, pb, res, error, tolerance, timing.value_or("advance"),
                                           run.backend(), world.size());
      run.writer().set_units(ig::units(want_cash_flows || want_duration));
      ig::write_group(run.writer(), groups[gi], whole, res, cli.stamp(attrs, groups[gi].policies->attrs), valuation);
    }
    progress.finish();

    // 6. Write (rank 0): the stream's end, the profile, the commit.
    return run.write({}, totals.params(align, run.devices().size(), world.size()), log);
  });
}
