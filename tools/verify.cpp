// verify: compares streams array by array within tolerances.
//   verify CANDIDATE REFERENCE            two streams
//   verify --against REFERENCE            candidate on stdin (or -i)
//   verify --text-ref FILE --array NAME   candidate array against numbers in a text file
// Exit 0 when every compared array is within tolerance, 1 when not, 2 on bad input.
#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>

#include "common/cli.hpp"
#include "common/strings.hpp"
#include "common/text_table.hpp"

namespace numpipe {
namespace {

// --rtol 1e-6 --rtol price=1e-4: a default and per-array overrides.
struct PerArray {
  double fallback = 0;
  bool given = false;
  std::map<std::string, double> by_name;
  double for_array(const std::string& name) const {
    auto it = by_name.find(name);
    return it != by_name.end() ? it->second : fallback;
  }
  bool given_for(const std::string& name) const { return by_name.count(name) || given; }
};

// One --rtol/--atol/--ulp word: X (every array) or NAME=X.
void add_per_array(PerArray& p, const std::string& option, const std::string& item) {
  std::string name, value = item;
  if (auto eq = item.find('='); eq != std::string::npos) {
    name = item.substr(0, eq);
    value = item.substr(eq + 1);
  }
  auto refuse = [&] { fail_input("--" + option + " takes a non-negative number or NAME=NUMBER, got '" + item + "'"); };
  if (value.empty()) refuse();
  const double v = decimal_number(value, "--" + option + (name.empty() ? std::string() : " " + name));
  if (v < 0) refuse();
  if (name.empty()) {
    p.fallback = v;
    p.given = true;
  } else {
    p.by_name[name] = v;
  }
}

// A per-array tolerance whose name is in no stream is a typo that would leave an
// array compared at the wrong tolerance: refuse it, listing the arrays there are.
void check_tolerance_names(const std::vector<const PerArray*>& options, const std::vector<const std::vector<Record>*>& streams) {
  static const char* const option_names[] = {"rtol", "atol", "ulp"};
  std::vector<std::string> names;
  for (const auto* records : streams)
    for (const auto& r : *records)
      if (std::find(names.begin(), names.end(), r.name) == names.end()) names.push_back(r.name);
  for (std::size_t k = 0; k < options.size(); ++k)
    for (const auto& [name, value] : options[k]->by_name) {
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      char v[32];
      std::snprintf(v, sizeof v, "%g", value);
      fail_input("--" + std::string(option_names[k < 3 ? k : 0]) + " " + name + "=" + v + ": no array '" + name +
                 "' in either stream (the arrays: " + (list.empty() ? "none" : list) + ")");
    }
}

struct Tolerance {
  double rtol = 0, atol = 0;
  double ulp = 0;
  bool use_ulp = false;
  bool nan_equal = true;
};

// Distance in units in the last place between two finite values of the same
// binary format: the count of representable numbers between them.
template <class Float, class Int>
double ulp_distance(double a_d, double b_d) {
  Float a = static_cast<Float>(a_d), b = static_cast<Float>(b_d);
  Int ia, ib;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  // Map sign-magnitude to a monotonic two's-complement order.
  const Int min = std::numeric_limits<Int>::min();
  if (ia < 0) ia = min - ia;
  if (ib < 0) ib = min - ib;
  return std::fabs(static_cast<double>(ia) - static_cast<double>(ib));
}

struct Summary {
  std::string name;
  std::string problem;  // shape/dtype/name mismatch; empty when values were compared
  std::size_t count = 0, over = 0, nans = 0;
  double max_abs = 0, max_rel = 0, max_ulp = 0;
  std::size_t worst = 0;  // flat index of the element furthest over tolerance (or of max_abs)
  double worst_a = 0, worst_b = 0;
  Shape shape;
  bool ok() const { return problem.empty() && over == 0; }
};

std::string index_string(std::size_t flat, const Shape& shape) {
  if (shape.empty()) return "[]";
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    std::int64_t n = shape[d] > 0 ? shape[d] : 1;
    idx[d] = static_cast<std::int64_t>(flat % static_cast<std::size_t>(n));
    flat /= static_cast<std::size_t>(n);
  }
  return shape_string(idx);
}

// Compares candidate values a[i] against reference values b[i].
template <class GetA, class GetB>
void compare_values(Summary& s, std::size_t n, GetA a_at, GetB b_at, const Tolerance& tol, bool f4) {
  double worst_excess = -1;
  s.count = n;
  for (std::size_t i = 0; i < n; ++i) {
    double a = a_at(i), b = b_at(i);
    bool pass;
    double excess = 0;
    if (std::isnan(a) || std::isnan(b)) {
      ++s.nans;
      pass = tol.nan_equal && std::isnan(a) && std::isnan(b);
      excess = pass ? 0 : INFINITY;
    } else if (a == b) {
      pass = true;
    } else {
      double abs_err = std::fabs(a - b);
      double rel_err = b != 0 ? abs_err / std::fabs(b) : INFINITY;
      if (std::isfinite(abs_err)) s.max_abs = std::max(s.max_abs, abs_err);
      else s.max_abs = INFINITY;
      s.max_rel = std::max(s.max_rel, rel_err);
      double bound = tol.atol + tol.rtol * std::fabs(b);
      pass = abs_err <= bound;
      excess = bound > 0 ? abs_err / bound : INFINITY;
      if (tol.use_ulp && std::isfinite(a) && std::isfinite(b)) {
        double u = f4 ? ulp_distance<float, std::int32_t>(a, b) : ulp_distance<double, std::int64_t>(a, b);
        s.max_ulp = std::max(s.max_ulp, u);
        if (u <= tol.ulp) pass = true;
      }
      if (worst_excess < 0 && s.over == 0) {
        // Until something fails, point at the largest absolute error.
        if (abs_err >= s.max_abs) { s.worst = i; s.worst_a = a; s.worst_b = b; }
      }
    }
    if (!pass) {
      ++s.over;
      if (excess > worst_excess) {
        worst_excess = excess;
        s.worst = i;
        s.worst_a = a;
        s.worst_b = b;
      }
    }
  }
}

// Numbers of a plain-text file: separators are whitespace , ; [ ] ( ); comments
// start with // or # and run to the end of the line.
// Within --max-bytes and the memory limit (TextBudget): the text counts as it is
// read, and then the numbers as they accumulate, refused (exit 3) at the line reached.
std::vector<double> read_text_numbers(const std::string& path, std::uint64_t max_bytes) {
  const std::string content = read_text_file(path, max_bytes);
  const TextBudget budget(max_bytes);
  std::istringstream f(content);
  std::vector<double> values;
  std::string line;
  for (int line_no = 1; std::getline(f, line); ++line_no) {
    budget.check(static_cast<double>(content.size()) + 8.0 * static_cast<double>(values.size() + line.size() / 2), path,
                 line_no);
    if (auto c = line.find("//"); c != std::string::npos) line.resize(c);
    if (auto c = line.find('#'); c != std::string::npos) line.resize(c);
    const char* p = line.c_str();
    while (*p) {
      if (std::strchr(" \t\r,;[]()", *p)) {
        ++p;
        continue;
      }
      // A number runs to a separator ("1.5x" is not one), read as a text table's cells are
      // (common/text_table.hpp parse_number): decimal, or inf and nan, which --nan compares;
      // a hexadecimal "0x1p3" is no number.
      const std::string token(p, std::strcspn(p, " \t\r,;[]()"));
      double v = 0;
      if (!parse_number(token, v)) fail_input(path + ":" + std::to_string(line_no) + ": not a number: '" + token + "'");
      values.push_back(v);
      p += token.size();
    }
  }
  if (values.empty()) fail_input("--text-ref file '" + path + "' holds no numbers");
  return values;
}

std::pair<std::size_t, std::size_t> parse_range(const std::string& text, std::size_t size_a, std::size_t size_b) {
  auto colon = text.find(':');
  auto bad = [&] { fail_input("--range must be START:STOP with 0 <= START < STOP, got '" + text + "'"); };
  if (colon == std::string::npos) bad();
  std::size_t lo = 0, hi = 0;
  if (!decimal_digits(text.substr(0, colon)) || !decimal_digits(text.substr(colon + 1))) bad();
  try {  // (digits beyond 64 bits: out of range)
    lo = std::stoull(text.substr(0, colon));
    hi = std::stoull(text.substr(colon + 1));
  } catch (const std::exception&) {
    bad();
  }
  if (lo >= hi) bad();
  if (hi > size_a || hi > size_b)
    fail_input("--range " + text + " reaches past the data: the array has " + std::to_string(size_a) +
               " values and the text reference " + std::to_string(size_b));
  return {lo, hi};
}

void print_summary(const Summary& s, const Tolerance& tol) {
  if (!s.problem.empty()) {
    std::printf("%-16s FAIL  %s\n", s.name.c_str(), s.problem.c_str());
    return;
  }
  std::printf("%-16s %s  n=%zu  max_abs=%.3e  max_rel=%.3e", s.name.c_str(), s.ok() ? "ok  " : "FAIL", s.count,
              s.max_abs, s.max_rel);
  if (tol.use_ulp) std::printf("  max_ulp=%.0f", s.max_ulp);
  if (s.count && (s.max_abs > 0 || s.over)) std::printf("  worst %s (%.17g vs %.17g)", index_string(s.worst, s.shape).c_str(), s.worst_a, s.worst_b);
  std::printf("  over=%zu", s.over);
  if (s.nans) std::printf("  nan=%zu", s.nans);
  std::printf("  [rtol=%g atol=%g%s]\n", tol.rtol, tol.atol, tol.use_ulp ? (" ulp=" + std::to_string((long long)tol.ulp)).c_str() : "");
}

json summary_json(const Summary& s, const Tolerance& tol) {
  json j = {{"name", s.name}, {"ok", s.ok()}};
  if (!s.problem.empty()) {
    j["problem"] = s.problem;
    return j;
  }
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")); };
  j.update({{"count", s.count}, {"over", s.over}, {"nan", s.nans}, {"max_abs", num(s.max_abs)},
            {"max_rel", num(s.max_rel)}, {"worst_index", s.count ? json(index_string(s.worst, s.shape)) : json()},
            {"worst_candidate", num(s.worst_a)}, {"worst_reference", num(s.worst_b)},
            {"rtol", tol.rtol}, {"atol", tol.atol}});
  if (tol.use_ulp) j["max_ulp"] = s.max_ulp, j["ulp"] = tol.ulp;
  return j;
}

// The options, declared once with their checks (run(), step 1).
struct VerifyOptions {
  std::optional<std::string> against, text_ref, range, text_range;
  std::optional<std::vector<std::string>> rtol_words, atol_words, ulp_words, only, ignore, streams;
  PerArray rtol, atol, ulp;
  std::string nan = "equal";
  bool ignore_dtype = false, as_json = false;

  void declare(Cli& cli) {
    const std::string g = "Compare";
    cli.option("against", &against, "Reference stream; the candidate is read from stdin or -i", "REF", g);
    cli.option("text-ref", &text_ref, "Reference numbers in a text file (e.g. FinPar's [ a, b, ... ])", "FILE", g);
    auto per_array = [&](const char* name, auto* words, PerArray* into, const char* help, const char* arg) {
      cli.option(name, words, help, arg, g).check([into, name](const std::vector<std::string>& items) {
        for (const auto& item : items) add_per_array(*into, name, item);
      });
    };
    per_array("rtol", &rtol_words, &rtol, "Relative tolerance: X for all arrays or NAME=X; repeatable", "X");
    per_array("atol", &atol_words, &atol, "Absolute tolerance: X or NAME=X; repeatable", "X");
    per_array("ulp", &ulp_words, &ulp, "Also pass values within N units in the last place: N or NAME=N", "N");
    cli.option("nan", &nan, "NaN policy: equal (NaN matches NaN) or fail (any NaN fails)", "P", g).one_of({"equal", "fail"});
    cli.option("array", &only, "Compare only these arrays (repeatable; with --text-ref: the array to compare)", "NAME", g);
    cli.option("ignore", &ignore, "Skip these arrays (repeatable)", "NAME", g);
    cli.option("range", &range, "With --text-ref: compare elements START..STOP-1 only", "START:STOP", g);
    cli.option("text-range", &text_range, "With --text-ref: the reference's numbers to use (default: those --range names)",
               "START:STOP", g);
    cli.flag("ignore-dtype", &ignore_dtype, "Compare values even where the dtypes differ (e.g. an fp32 run against fp64)", g);
    cli.flag("json", &as_json, "Print the summary as JSON", g);
    cli.option("positional", &streams, "", "", g);
    cli.positional({"positional"});
  }
  bool selected(const std::string& name) const {
    if (ignore && std::find(ignore->begin(), ignore->end(), name) != ignore->end()) return false;
    return !only || only->empty() || std::find(only->begin(), only->end(), name) != only->end();
  }
  Tolerance tolerance_for(const std::string& name) const {
    Tolerance t;
    t.rtol = rtol.for_array(name);
    t.atol = atol.for_array(name);
    t.use_ulp = ulp.given_for(name);
    t.ulp = ulp.for_array(name);
    t.nan_equal = nan == "equal";
    return t;
  }
  std::vector<std::string> positional() const { return streams.value_or(std::vector<std::string>{}); }
};

// The compared arrays' summaries, each with the tolerance it was held to.
struct Comparison {
  std::vector<Summary> summaries;
  std::vector<Tolerance> tolerances;
  void add(Summary s, const Tolerance& t) {
    summaries.push_back(std::move(s));
    tolerances.push_back(t);
  }
};

// verify --text-ref FILE: one candidate array against the numbers of a text file.
Comparison compare_with_text(const Cli& cli, const VerifyOptions& o, const RecordFilter& compared) {
  const std::vector<std::string> pos = o.positional();
  if (o.against) fail_input("--text-ref and --against are exclusive");
  if (pos.size() > 1) fail_input("--text-ref takes at most one candidate stream");
  const ReadLimits limits = cli.read_limits();
  auto text = read_text_numbers(*o.text_ref, limits.max_bytes);
  auto records = read_stream(pos.empty() ? cli.input() : pos[0], limits, compared);
  check_tolerance_names({&o.rtol, &o.atol, &o.ulp}, {&records});
  const bool named = o.only && !o.only->empty();
  const Record* rec = nullptr;
  for (const auto& r : records)
    if (o.selected(r.name)) {
      if (rec && !named) fail_input("the candidate holds several arrays: name one with --array");
      if (!rec) rec = &r;
    }
  if (!rec) fail_input(!named ? "the candidate stream holds no arrays" : "the candidate stream has no array '" + o.only->front() + "'");
  std::size_t lo = 0, hi = rec->size();
  if (o.range) {
    std::tie(lo, hi) = parse_range(*o.range, rec->size(), o.text_range ? SIZE_MAX : text.size());
  } else if (text.size() != rec->size() && !o.text_range) {
    fail_input("array '" + rec->name + "' has " + std::to_string(rec->size()) + " values but the text reference has " +
               std::to_string(text.size()) + " (use --range START:STOP to compare a part)");
  }
  std::size_t text_lo = lo;
  if (o.text_range) {
    auto [tlo, thi] = parse_range(*o.text_range, SIZE_MAX, text.size());
    if (thi - tlo != hi - lo)
      fail_input("--text-range selects " + std::to_string(thi - tlo) + " numbers but the candidate range has " +
                 std::to_string(hi - lo));
    text_lo = tlo;
  }
  Summary s;
  s.name = rec->name;
  s.shape = {static_cast<std::int64_t>(hi - lo)};
  const Tolerance tol = o.tolerance_for(rec->name);
  compare_values(s, hi - lo, [&](std::size_t i) { return rec->value_as_double(lo + i); },
                 [&](std::size_t i) { return text[text_lo + i]; }, tol, rec->dtype == DType::f4);
  Comparison out;
  out.add(std::move(s), tol);
  return out;
}

// The candidate's record of the reference's record r (name, occurrence k) compared with it.
Summary compare_record(const Record& r, const Record* c, std::size_t k, const Tolerance& tol, bool ignore_dtype) {
  Summary s;
  s.name = r.name + (k ? "#" + std::to_string(k) : "");
  s.shape = r.shape;
  if (!c) {
    s.problem = "missing from the candidate";
  } else if (c->shape != r.shape) {
    s.problem = "shape " + shape_string(c->shape) + " differs from the reference's " + shape_string(r.shape);
  } else if (c->dtype != r.dtype && !ignore_dtype) {
    s.problem = std::string("dtype ") + dtype_name(c->dtype) + " differs from the reference's " + dtype_name(r.dtype) +
                " (--ignore-dtype compares the values anyway)";
  } else {
    compare_values(s, r.size(), [&](std::size_t i) { return c->value_as_double(i); },
                   [&](std::size_t i) { return r.value_as_double(i); }, tol, c->dtype == DType::f4 || r.dtype == DType::f4);
  }
  return s;
}

// verify CANDIDATE REFERENCE, or --against REF: records matched by (name, occurrence),
// in the reference's order; the candidate's extra records fail.
Comparison compare_streams(const Cli& cli, const VerifyOptions& o, const RecordFilter& compared) {
  const std::vector<std::string> pos = o.positional();
  if (o.range || o.text_range) fail_input("--range and --text-range apply to --text-ref only");
  std::string cand_path, ref_path;
  if (o.against) {
    if (pos.size() > 1) fail_input("with --against, give at most one candidate stream");
    ref_path = *o.against;
    cand_path = pos.empty() ? cli.input() : pos[0];
  } else {
    if (pos.size() != 2) fail_input("give two streams (verify CANDIDATE REFERENCE), or --against REF, or --text-ref FILE");
    cand_path = pos[0];
    ref_path = pos[1];
  }
  if (cand_path == "-" && ref_path == "-") fail_input("only one of the streams can be stdin");
  const ReadLimits limits = cli.read_limits();
  auto cand = read_stream(cand_path, limits, compared);
  auto ref = read_stream(ref_path, limits, compared);
  check_tolerance_names({&o.rtol, &o.atol, &o.ulp}, {&cand, &ref});
  std::map<std::string, std::vector<const Record*>> cand_by_name;
  for (const auto& r : cand) cand_by_name[r.name].push_back(&r);
  std::map<std::string, std::size_t> used;
  Comparison out;
  for (const auto& r : ref) {
    if (!o.selected(r.name)) continue;
    const std::size_t k = used[r.name]++;
    auto it = cand_by_name.find(r.name);
    const Record* c = (it != cand_by_name.end() && k < it->second.size()) ? it->second[k] : nullptr;
    const Tolerance tol = o.tolerance_for(r.name);
    out.add(compare_record(r, c, k, tol, o.ignore_dtype), tol);
  }
  for (const auto& [name, list] : cand_by_name) {
    if (!o.selected(name)) continue;
    for (std::size_t k = used[name]; k < list.size(); ++k) {
      Summary s;
      s.name = name + (k ? "#" + std::to_string(k) : "");
      s.problem = "not in the reference";
      out.add(std::move(s), o.tolerance_for(name));
    }
  }
  for (const std::string& name : o.only.value_or(std::vector<std::string>{}))
    if (!cand_by_name.count(name) && !used.count(name)) fail_input("--array " + name + ": no such array in either stream");
  if (out.summaries.empty()) fail_input("nothing to compare: the streams hold no (selected) arrays");
  return out;
}

// The summaries as text (with -q the failures only) or JSON; exit 1 when any failed.
int report(const Comparison& c, bool as_json, bool quiet) {
  std::size_t failed = 0;
  for (const auto& s : c.summaries) failed += !s.ok();
  if (as_json) {
    json out = {{"ok", failed == 0}, {"arrays", json::array()}};
    for (std::size_t i = 0; i < c.summaries.size(); ++i) out["arrays"].push_back(summary_json(c.summaries[i], c.tolerances[i]));
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (std::size_t i = 0; i < c.summaries.size(); ++i)
      if (!quiet || !c.summaries[i].ok()) print_summary(c.summaries[i], c.tolerances[i]);
    if (!quiet || failed) {
      if (failed) std::printf("verify: %zu of %zu arrays differ beyond tolerance\n", failed, c.summaries.size());
      else std::printf("verify: %zu arrays within tolerance\n", c.summaries.size());
    }
  }
  return failed ? static_cast<int>(ExitCode::verify_failed) : 0;
}

int run(int argc, char** argv) {
  Cli cli({"verify", "Compare numpipe streams array by array within tolerances", "[CANDIDATE [REFERENCE]]",
           "  gen-input array --seed 1 -o ref.nps\n"
           "  gen-input array --seed 1 | verify --against ref.nps --rtol 1e-12\n"
           "  gen-input price --dataset large | price | \\\n"
           "    verify --text-ref share/ref/finpar-locvolcalib/large.output.data --array price --range 0:128 --rtol 1e-5",
           "", "Print only the arrays that fail, and the count of them; nothing when all pass"},
          kInput);
  cli.exit_code(1, "some array differs beyond its tolerance");
  // 1. The options, declared once with their checks.
  VerifyOptions o;
  o.declare(cli);
  // 2. Parse: every value checked.
  cli.parse(argc, argv);
  // 3. Read and compare; arrays that are not compared are passed over unread.
  const RecordFilter compared = [&](const RecordHeader& h) { return o.selected(h.name); };
  const Comparison c = o.text_ref ? compare_with_text(cli, o, compared) : compare_streams(cli, o, compared);
  // 4. Report.
  return report(c, o.as_json, cli.quiet());
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("verify", [&] { return numpipe::run(argc, argv); });
}
