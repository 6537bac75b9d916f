// Fibers (fuzz/fiber.h): the stack switch keeps each side's frames, stack
// arrays, exceptions and floating-point control words its own. Under the
// sanitizer build these run with AddressSanitizer told of every switch, so a
// mispaired annotation shows as a false stack-buffer-overflow or
// stack-use-after-return here.
#include <gtest/gtest.h>

#include <cfenv>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fiber.h"

namespace normcheck::fuzz {
namespace {

// Fills a stack array of its own with `tag`, yields `yields` times from
// inside it, and returns whether the array still holds `tag`.
[[gnu::noinline]] bool array_survives_yields(char tag, int yields) {
  volatile char buffer[4096];
  for (auto& c : buffer) c = tag;
  for (int i = 0; i < yields; ++i) Fiber::yield();
  for (const auto& c : buffer)
    if (c != tag) return false;
  return true;
}

[[gnu::noinline]] int throws_after_yield(int depth) {
  char frame[256];
  frame[depth % 256] = static_cast<char>(depth);
  if (depth == 0) {
    Fiber::yield();
    throw std::runtime_error("from the fiber");
  }
  return throws_after_yield(depth - 1) + frame[depth % 256];
}

TEST(Fiber, ResumesAndYieldsInTurn) {
  std::vector<std::string> log;
  EXPECT_EQ(Fiber::current(), nullptr);
  Fiber a([&] {
    log.push_back("a1");
    EXPECT_NE(Fiber::current(), nullptr);
    Fiber::yield();
    log.push_back("a2");
  });
  Fiber b([&] {
    log.push_back("b1");
    Fiber::yield();
    log.push_back("b2");
  });
  EXPECT_FALSE(a.resume());
  EXPECT_FALSE(b.resume());
  EXPECT_EQ(Fiber::current(), nullptr);
  EXPECT_TRUE(b.resume());
  EXPECT_TRUE(a.resume());
  EXPECT_TRUE(a.resume());  // finished: nothing runs
  EXPECT_EQ(log, (std::vector<std::string>{"a1", "b1", "b2", "a2"}));
}

TEST(Fiber, StackArraysOfEverySideSurviveTheSwitches) {
  constexpr int kFibers = 16;
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<int> kept(kFibers, 0);
  for (int i = 0; i < kFibers; ++i)
    fibers.push_back(std::make_unique<Fiber>([&kept, i] { kept[i] = array_survives_yields(static_cast<char>('a' + i), 3); }));
  volatile char mine[4096];
  for (auto& c : mine) c = 'z';
  for (int round = 0; round < 4; ++round)
    for (auto& f : fibers) f->resume();
  for (int i = 0; i < kFibers; ++i) {
    EXPECT_TRUE(fibers[i]->finished()) << i;
    EXPECT_EQ(kept[i], 1) << i;
  }
  for (const auto& c : mine) ASSERT_EQ(c, 'z');
}

// A thrown exception unwinds the fiber's own frames, after a switch, and is
// caught on its stack.
TEST(Fiber, AnExceptionIsThrownAndCaughtOnTheFibersStack) {
  std::string caught;
  Fiber f([&] {
    try {
      throws_after_yield(20);
    } catch (const std::runtime_error& e) {
      caught = e.what();
    }
  });
  EXPECT_FALSE(f.resume());
  EXPECT_TRUE(f.resume());
  EXPECT_EQ(caught, "from the fiber");
}

// Stacks are reused by the next fibers: what a finished fiber left on its
// stack (its frames, an exception's unwinding) does not trouble them.
TEST(Fiber, StacksAreReusedByManyFibers) {
  int done = 0;
  for (int i = 0; i < 300; ++i) {
    Fiber f([&done, i] {
      if (i % 3 == 0) {
        try {
          throws_after_yield(i % 40);
        } catch (const std::runtime_error&) {
        }
      } else {
        done += array_survives_yields(static_cast<char>(i), 1);
      }
    });
    while (!f.resume()) {
    }
    if (i % 3 == 0) ++done;
  }
  EXPECT_EQ(done, 300);
}

// The rounding mode (MXCSR and the x87 control word) is saved with each
// side's registers: a fiber's mode stays its own across yields, and its
// caller's is the caller's.
TEST(Fiber, EachSideKeepsItsFloatingPointControl) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  int seen_after_yield = -1;
  Fiber f([&] {
    EXPECT_EQ(std::fegetround(), FE_TONEAREST);  // as at its first resume()
    std::fesetround(FE_UPWARD);
    Fiber::yield();
    seen_after_yield = std::fegetround();
  });
  EXPECT_FALSE(f.resume());
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  std::fesetround(FE_DOWNWARD);
  EXPECT_TRUE(f.resume());
  EXPECT_EQ(seen_after_yield, FE_UPWARD);
  EXPECT_EQ(std::fegetround(), FE_DOWNWARD);
  std::fesetround(FE_TONEAREST);
}

}  // namespace
}  // namespace normcheck::fuzz
