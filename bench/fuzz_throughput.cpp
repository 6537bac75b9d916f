// How many cases a second `normcheck fuzz` runs on a plugin's kernel, one job
// in one process, for this build against a baseline build measured in the same
// run: the figure a change to the plugin isolation (fuzz/isolation.h) is
// judged by.
//
// Both builds are timed through their command lines, as whole processes, so
// the baseline can be any earlier build of normcheck. Per band of widths
// (fuzz_band.h) and build, a round times
//   normcheck fuzz --plugin P --kernel K --cases N+1 --shard s/101 --seed S --jobs 1 --corpus EMPTY --json
// and the same command with --cases 1; the difference is the time of N
// generated cases (start-up, plugin load and the first case cancel), and
// N over it the cases a second. These are the campaign's own cases, run as a
// campaign runs them, in batches of 64; a corpus is replayed one problem file
// at a time (with the fork server, each in a child of its own), so timing a
// corpus would time a file's cost per case. The builds alternate, the order swapped every round
// (A B, B A, ...), so that a drift of the machine's load cancels over rounds;
// each build's figure is the median over rounds, the ratio the median of the
// per-round ratios, each with its smallest and largest round.
//
// A run that reports a finding, or exits other than 0, ends the measurement
// (exit 1): its time would include shrinking, not throughput. The scratch
// directory (the corpus, where the finding was saved) is then kept.
//   normcheck_fuzz_throughput --plugin P.so --kernel K [--baseline OTHER/bin/normcheck]
//                             [--d 4,16,64,256,1024] [--cases N] [--rounds R] [--seed S] [--json]
// This build's normcheck is the one beside this program. Exit 0, 1 (a run
// failed or found something), 2 (bad arguments, or a build refused them).
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_band.h"
#include "normcheck/seed.h"
#include "timed_run.h"

namespace {

namespace fs = std::filesystem;
using normcheck::bench::TimedRun;

constexpr uint64_t kDefaultSeed = 20261124;  // `normcheck fuzz`'s

[[noreturn]] void usage(const std::string& message) {
  std::fprintf(stderr,
               "%s\nusage: normcheck_fuzz_throughput --plugin P.so --kernel K [--baseline OTHER/bin/normcheck] "
               "[--d 4,16,64,256,1024] [--cases N] [--rounds R] [--seed S] [--json]\n",
               message.c_str());
  std::exit(2);
}

struct Options {
  std::string plugin, kernel, baseline;
  std::vector<int64_t> widths = {4, 16, 64, 256, 1024};
  int64_t cases = 2048;
  int rounds = 5;
  uint64_t seed = kDefaultSeed;
  bool json = false;
};

template <typename T>
std::optional<T> whole_number(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool is_executable(const fs::path& path) { return fs::is_regular_file(path) && access(path.c_str(), X_OK) == 0; }

Options parse(int argc, char** argv) {
  Options o;
  std::string seed_text;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--plugin" && has_value) {
      o.plugin = argv[++i];
    } else if (arg == "--kernel" && has_value) {
      o.kernel = argv[++i];
    } else if (arg == "--baseline" && has_value) {
      o.baseline = argv[++i];
    } else if (arg == "--d" && has_value) {
      o.widths.clear();
      std::string_view list = argv[++i];
      for (;;) {
        const std::size_t comma = list.find(',');
        const auto d = whole_number<int64_t>(list.substr(0, comma));
        if (!d || !normcheck::bench::fuzz_size_for(*d))
          usage("--d wants widths from 3 to 65536 separated by commas, e.g. 4,16,64");
        o.widths.push_back(*d);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    } else if (arg == "--cases" && has_value) {
      const auto n = whole_number<int64_t>(argv[++i]);
      if (!n || *n < 1) usage("--cases wants a positive whole number");
      o.cases = *n;
    } else if (arg == "--rounds" && has_value) {
      const auto n = whole_number<int>(argv[++i]);
      if (!n || *n < 1) usage("--rounds wants a positive whole number");
      o.rounds = *n;
    } else if (arg == "--seed" && has_value) {
      seed_text = argv[++i];
    } else if (arg == "--json") {
      o.json = true;
    } else {
      usage("unknown option or missing value: " + std::string(arg));
    }
  }
  try {
    o.seed = seed_text.empty() ? normcheck::seed_from_env().value_or(kDefaultSeed) : normcheck::parse_seed(seed_text);
  } catch (const std::invalid_argument& e) {
    usage(e.what());
  }
  if (o.plugin.empty() || o.kernel.empty()) usage("--plugin and --kernel are required");
  if (!fs::is_regular_file(o.plugin)) usage("no plugin file " + o.plugin);
  o.plugin = fs::absolute(o.plugin).lexically_normal().string();
  if (!o.baseline.empty() && !is_executable(o.baseline)) usage("the baseline " + o.baseline + " is not an executable");
  if (!o.baseline.empty()) o.baseline = fs::absolute(o.baseline).lexically_normal().string();
  return o;
}

// One build's normcheck, and its cases a second per round of the band being measured.
struct Build {
  std::string normcheck;
  std::vector<double> rates;
};

class Measurement {
 public:
  Measurement(const Options& options, fs::path scratch) : options_(options), scratch_(std::move(scratch)) {
    fs::create_directories(corpus());
  }

  // The seconds of one `normcheck fuzz` run of `cases` cases drawn at `size`;
  // exits when the run fails or reports a finding.
  double seconds(const Build& build, int size, int64_t cases) const {
    const std::vector<std::string> argv = {
        build.normcheck, "fuzz",
        "--plugin",      options_.plugin,
        "--kernel",      options_.kernel,
        "--cases",       std::to_string(cases),
        "--seed",        std::to_string(options_.seed),
        "--shard",       std::to_string(size) + "/" + std::to_string(normcheck::bench::kFuzzSizes),
        "--jobs",        "1",
        "--corpus",      corpus().string(),
        "--json"};
    TimedRun run;
    try {
      run = normcheck::bench::run_timed(argv, scratch_);
    } catch (const std::runtime_error& e) {
      fail(1, e.what(), argv, {});
    }
    if (run.signal) fail(1, "ended by signal " + std::to_string(run.signal), argv, run);
    // What the run reports: {cases, seconds, seed, findings: [{label, reproduce, ...}]}.
    int64_t reported = -1;
    std::string finding;  // the first one's label and reproduce command
    try {
      const nlohmann::json doc = nlohmann::json::parse(run.out);
      reported = doc.at("cases").get<int64_t>();
      if (const nlohmann::json& findings = doc.at("findings"); !findings.empty())
        finding = findings[0].at("label").get<std::string>() +
                  ", reproduce: " + findings[0].at("reproduce").get<std::string>();
    } catch (const nlohmann::json::exception&) {
      fail(run.exit_code == 2 ? 2 : 1, "exit " + std::to_string(run.exit_code) + ", no fuzz JSON on stdout", argv, run);
    }
    if (!finding.empty())
      fail(1,
           "a finding (" + finding + "): its time would include shrinking; use a kernel that passes, or another --seed",
           argv, run);
    if (run.exit_code != 0) fail(run.exit_code == 2 ? 2 : 1, "exit " + std::to_string(run.exit_code), argv, run);
    if (reported != cases)
      fail(1, "it reports " + std::to_string(reported) + " cases, not " + std::to_string(cases), argv, run);
    return run.seconds;
  }

  fs::path corpus() const { return scratch_ / "corpus"; }

 private:
  [[noreturn]] void fail(int code, const std::string& why, const std::vector<std::string>& argv,
                         const TimedRun& run) const {
    std::string command;
    for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
    std::fprintf(stderr, "normcheck_fuzz_throughput: %s\n  %s\n%s", why.c_str(), command.c_str(), run.err.c_str());
    if (code == 2) {  // refused arguments: nothing in the scratch directory to look at
      std::error_code ignored;
      fs::remove_all(scratch_, ignored);
    } else {
      std::fprintf(stderr, "(scratch directory kept: %s)\n", scratch_.c_str());
    }
    std::exit(code);
  }

  const Options& options_;
  fs::path scratch_;
};

struct Spread {
  double median = NAN, min = NAN, max = NAN;
  int resolved = 0;  // rounds whose difference was positive
};

// Over the finite values (a round whose N cases took no longer than the
// single case, on this machine's noise, has no figure).
Spread spread_of(const std::vector<double>& values) {
  std::vector<double> v;
  for (double x : values)
    if (std::isfinite(x)) v.push_back(x);
  Spread s;
  s.resolved = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  return s;
}

std::string text_of(const Spread& s, const char* format) {
  if (s.resolved == 0) return "unresolved";
  char text[96];
  std::snprintf(text, sizeof text, format, s.median, s.min, s.max);
  return text;
}

nlohmann::json json_of(const Spread& s, const std::vector<double>& rounds) {
  const auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json per_round = nlohmann::json::array();
  for (double v : rounds) per_round.push_back(number(v));
  return {{"median", number(s.median)}, {"min", number(s.min)}, {"max", number(s.max)}, {"rounds", per_round}};
}

fs::path make_scratch() {
  std::string pattern = (fs::temp_directory_path() / "normcheck_fuzz_throughput.XXXXXX").string();
  if (!mkdtemp(pattern.data())) usage("cannot make a scratch directory under " + fs::temp_directory_path().string());
  return pattern;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path here = self.parent_path() / "normcheck";
  if (ec || !is_executable(here)) usage("no normcheck beside this program (" + here.string() + "): build it");

  std::vector<Build> builds;  // [0]: this build, [1]: the baseline when given
  builds.push_back({here.string(), {}});
  if (!options.baseline.empty()) builds.push_back({options.baseline, {}});
  const fs::path scratch = make_scratch();
  const Measurement measure(options, scratch);

  // An untimed run of each build first: it reads the binary and its libraries
  // from disk, and stops here when a build refuses the plugin or the kernel.
  for (const Build& b : builds) measure.seconds(b, *normcheck::bench::fuzz_size_for(options.widths.front()), 1);

  const int64_t n = options.cases;
  if (!options.json) {
    std::printf("%s of %s, seed %llu (--seed or NORMCHECK_SEED)\n", options.kernel.c_str(), options.plugin.c_str(),
                static_cast<unsigned long long>(options.seed));
    std::printf("this build: %s\n", builds[0].normcheck.c_str());
    if (builds.size() > 1) std::printf("baseline:   %s\n", builds[1].normcheck.c_str());
    std::printf("cases/s = %lld / (time of `fuzz --cases %lld` - time of `fuzz --cases 1`), one job, %d round%s%s\n",
                static_cast<long long>(n), static_cast<long long>(n + 1), options.rounds,
                options.rounds == 1 ? "" : "s", builds.size() > 1 ? ", order swapped every round" : "");
    std::printf("%-9s %-5s %-30s", "d <=", "size", "this cases/s [min, max]");
    if (builds.size() > 1) std::printf(" %-30s %s", "baseline cases/s [min, max]", "this/baseline [min, max]");
    std::printf("\n");
    std::fflush(stdout);
  }

  nlohmann::json bands = nlohmann::json::array();
  for (const int64_t d : options.widths) {
    const int size = *normcheck::bench::fuzz_size_for(d);
    std::vector<double> ratios;
    for (Build& b : builds) b.rates.clear();
    for (int r = 0; r < options.rounds; ++r) {
      for (std::size_t k = 0; k < builds.size(); ++k) {
        Build& b = builds[r % 2 == 0 ? builds.size() - 1 - k : k];  // baseline first in even rounds
        const double one = measure.seconds(b, size, 1);
        const double all = measure.seconds(b, size, n + 1);
        b.rates.push_back(all > one ? static_cast<double>(n) / (all - one) : NAN);
      }
      if (builds.size() > 1) ratios.push_back(builds[0].rates.back() / builds[1].rates.back());
    }
    const int64_t cap = normcheck::bench::fuzz_d_cap(size);
    nlohmann::json band = {
        {"d_max", cap}, {"size", size}, {"this", json_of(spread_of(builds[0].rates), builds[0].rates)}};
    if (builds.size() > 1) {
      band["baseline"] = json_of(spread_of(builds[1].rates), builds[1].rates);
      band["ratio"] = json_of(spread_of(ratios), ratios);
    }
    bands.push_back(band);
    if (!options.json) {
      std::printf("%-9lld %-5d %-30s", static_cast<long long>(cap), size,
                  text_of(spread_of(builds[0].rates), "%.0f [%.0f, %.0f]").c_str());
      if (builds.size() > 1)
        std::printf(" %-30s %s", text_of(spread_of(builds[1].rates), "%.0f [%.0f, %.0f]").c_str(),
                    text_of(spread_of(ratios), "%.3f [%.3f, %.3f]").c_str());
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  if (options.json) {
    nlohmann::json doc = {
        {"plugin", options.plugin}, {"kernel", options.kernel},          {"seed", options.seed}, {"cases", n},
        {"rounds", options.rounds}, {"this_build", builds[0].normcheck}, {"bands", bands}};
    if (builds.size() > 1) doc["baseline"] = builds[1].normcheck;
    std::printf("%s\n", doc.dump(2).c_str());
  }
  fs::remove_all(scratch, ec);
  return 0;
}
