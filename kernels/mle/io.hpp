// mle-fit's stream side beside the kernels: the options' parsers, the memory a
// series needs, the scaling of extreme series, the grid search and the finishing
// step over a BatchRun, the information criteria (AIC, BIC), the backtest's table,
// and the output records of the AEPD fits and of GARCH.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/profile.hpp"
#include "common/run.hpp"
#include "common/stream.hpp"
#include "mle.hpp"
#include "statistics.hpp"

namespace numpipe::mle {

// --quantiles: probabilities in (0, 1) separated by commas; --compare: normal and/or t.
std::vector<double> parse_levels(const std::string& text);
void parse_compare(const std::string& text, bool& normal, bool& student);

// The working set (docs/mle.md "Memory"), checked from the header of x before its
// payload is read (exit 3).
void require_mle_memory(const RecordHeader& x, const Params& params, std::size_t levels);

// A series so large or small that |x - theta|^p would overflow or underflow is fitted
// scaled by a power of two, exactly: 2^-e per series (0: as it is); unscale puts the
// estimates (and the series) back in the data's units.
std::vector<int> scale_series(std::vector<double>& x, const Series& s, const Params& params);
void unscale(std::vector<double>& x, const Series& s, const Params& params, std::int64_t windows,
             const std::vector<int>& exponent, std::size_t levels, Estimates& est);
// Bad input naming the first window whose fit is not finite (but for the windows
// without a maximum, NaN by design).
void require_finite_fits(const Series& s, const Params& params, std::int64_t windows, const Estimates& est,
                         std::size_t levels, const std::vector<Degenerate>& degenerate);

// The grid fits of this rank's windows [win0, win1) of [series][windows] (every
// window in one process) on the engine; phases into log (with the traffic and flop
// model of docs/profile.md); --repeat's runs; the progress line unless quiet.
struct GridRun {
  WindowFits fits;
  std::int64_t win0 = 0, win1 = 0;
  DeviceInfo device;
};
GridRun grid_search(const Series& s, const Params& params, const Engine& engine, const BatchRun& run, bool quiet,
                    PhaseLog& log);
// The estimates of those windows (finish), the refine and the quantiles on the
// device with CUDA; a progress line on rank 0 (root) for the CPU's slow parts.
Estimates finish_estimates(const Series& s, const Params& params, const GridRun& grid, FinishOptions options,
                           const Engine& engine, bool quiet, bool root, PhaseLog& log);
// Under MPI: every rank's estimates on rank 0, in [series][windows] order.
void gather_estimates(const BatchRun& run, Estimates& est);

// Information criteria of fits with k parameters to n points: AIC = 2k - 2 loglik,
// BIC = k log(n) - 2 loglik (Akaike 1974; Schwarz 1978).
std::vector<double> aic(const std::vector<double>& loglik, double parameters);
std::vector<double> bic(const std::vector<double>& loglik, double parameters, double points);
// The backtest's table, [series][levels][kBacktestColumns], from the hits
// (exceedances) of the points after the first window.
std::vector<double> backtest_rows(const Series& s, const Params& params, const std::vector<double>& levels,
                                  const std::vector<std::uint8_t>& hits);
// The labels of x's points (dates), if the input carries them (*xlabels: the
// record, or null); bad input when their count is not the series' length.
std::vector<std::string> read_time_labels(const std::vector<Record>& records, const Series& s, const Record** xlabels);

// The records of the AEPD fits: start, theta, p (p1, p2), s_l, s_r, loglik,
// no_maximum, skew, aic, bic; stderr and theta_ci, ks and ad, the normal and t fits,
// quantiles, exceedances and backtest, window_label where asked.
struct FitOutput {
  const Series& s;
  const Params& params;
  const Estimates& est;
  const FinishOptions& options;  // inform, gof, normal, student, levels
  bool backtest;
  const std::vector<Degenerate>& degenerate;
  const std::vector<std::uint8_t>& hits;
  const std::vector<double>& backtest_rows;
  const Record* xlabels;
  const std::vector<std::string>& time_labels;
  json attrs;  // every record's (stamped)
};
void write_fits(StreamWriter& writer, const FitOutput& output);
// The attrs of every fit record (before the stamp): the window, the grid, the
// method, the model, the windows without a maximum (all points equal, tied).
json fit_attrs(const Series& s, const Params& params, bool refined, const std::string& alpha_grid, Backend backend,
               int ranks, std::int64_t all_equal, std::int64_t tied);

// --model garch: GARCH(1,1) with AEPD innovations (garch.hpp) over the whole series
// or rolling windows; its records into writer. fhs: the quantiles by filtered
// historical simulation (garch_fhs_quantiles) instead of the AEPD's.
void write_garch(StreamWriter& writer, const Stamp& stamp, const std::vector<Record>& records, const Record& xr,
                 const Series& s, const Params& params, bool whole, bool inform, const std::vector<double>& levels,
                 bool backtest, bool fhs, const Engine& engine);

}  // namespace numpipe::mle
