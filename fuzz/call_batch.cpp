#include "call_batch.h"

#include <exception>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fiber.h"
#include "host/protocol.h"

namespace normcheck::fuzz {

static_assert(kGatheredCases == host::kMaxCalls);

namespace {

// Thrown out of park_call in a case that was abandoned, so that its frames
// unwind; caught only by gather_calls.
struct Abandoned {};

struct Parked {
  HostedPlugin* plugin = nullptr;
  const HostCall* call = nullptr;
  HostCallResult* result = nullptr;
  bool answered = false, abandoned = false;
};

// The state of the gather_calls() running on this thread.
struct Gathering {
  std::vector<Parked> parked;  // by case; plugin null: no call parked
  std::size_t running = 0;     // the case whose fiber runs
  CallScope* outer = nullptr;  // the scope in force around the fibers
};
thread_local Gathering* t_gathering = nullptr;

}  // namespace

bool park_call(HostedPlugin& plugin, const HostCall& call, HostCallResult& result) {
  Gathering* g = t_gathering;
  if (!g || !Fiber::current()) return false;
  Parked& p = g->parked[g->running];
  p = Parked{&plugin, &call, &result};
  // The fiber's own scopes stay its own while others run.
  CallScope* mine = CallScope::exchange_current(g->outer);
  Fiber::yield();
  CallScope::exchange_current(mine);
  const bool abandoned = p.abandoned;
  p = Parked{};
  if (abandoned) throw Abandoned{};
  return true;
}

void gather_calls(std::size_t n, const std::function<bool(std::size_t)>& run_case) {
  if (n > kGatheredCases) throw std::logic_error("gather_calls: more cases than a request holds");
  Gathering g;
  g.parked.resize(n);
  g.outer = CallScope::current();
  Gathering* const enclosing = std::exchange(t_gathering, &g);
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::size_t end = n;  // the cases from here on are abandoned
  std::exception_ptr failure;  // an exception out of a case: rethrown here
  for (std::size_t i = 0; i < n; ++i)
    fibers.push_back(std::make_unique<Fiber>([&run_case, &end, &failure, i] {
      try {
        if (run_case(i) && i + 1 < end) end = i + 1;
      } catch (const Abandoned&) {
      } catch (...) {
        failure = std::current_exception();
      }
    }));
  const auto resume = [&](std::size_t i) {
    g.running = i;
    fibers[i]->resume();
    if (failure) std::rethrow_exception(std::exchange(failure, nullptr));
  };
  // Unwinds the cases from `first` on that wait in a parked call.
  const auto abandon = [&](std::size_t first) {
    for (std::size_t i = first; i < n; ++i)
      if (fibers[i]->started() && !fibers[i]->finished()) {
        g.parked[i].abandoned = true;
        resume(i);
      }
  };
  try {
    for (;;) {
      // Every case that can go on, in order, until it parks or finishes.
      for (std::size_t i = 0; i < end; ++i)
        if (!fibers[i]->started() || (g.parked[i].plugin && g.parked[i].answered)) resume(i);
      // The calls parked, a batch per plugin, in case order.
      std::vector<std::size_t> waiting;
      for (std::size_t i = 0; i < end; ++i)
        if (g.parked[i].plugin && !g.parked[i].answered) waiting.push_back(i);
      if (waiting.empty()) break;
      std::vector<bool> sent(waiting.size(), false);
      for (std::size_t w = 0; w < waiting.size(); ++w) {
        if (sent[w]) continue;
        HostedPlugin* plugin = g.parked[waiting[w]].plugin;
        std::vector<std::size_t> cases;
        std::vector<HostCall> calls;
        for (std::size_t v = w; v < waiting.size(); ++v)
          if (g.parked[waiting[v]].plugin == plugin) {
            sent[v] = true;
            cases.push_back(waiting[v]);
            calls.push_back(*g.parked[waiting[v]].call);
          }
        std::vector<HostCallResult> results = plugin->run_calls(calls);
        for (std::size_t k = 0; k < cases.size(); ++k)
          if (results[k].ran) {
            Parked& p = g.parked[cases[k]];
            *p.result = std::move(results[k]);
            p.answered = true;
          }
      }
    }
  } catch (...) {  // normcheck's own failure (a case's, or a call the protocol cannot carry): no case goes on
    abandon(0);
    t_gathering = enclosing;
    throw;
  }
  abandon(end);
  t_gathering = enclosing;
}

}  // namespace normcheck::fuzz
