// tools/bench/cache_size.cpp: the last-level cache read from a sysfs-like
// folder (the highest level that holds data, whatever the index order), and
// the out-of-cache criterion (bytes moved >= 2x that cache) on real kernels.
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "cache_size.h"
#include "normcheck/kernel.h"

namespace normcheck::bench {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text << "\n";
}

// One cache of a sysfs cache folder: indexN/{level,type,size}.
struct Cache {
  int index, level;
  const char* type;
  const char* size;
};

// A folder of this process's own, removed with its contents when the test ends.
struct FreshDir {
  explicit FreshDir(const std::string& name)
      : path(fs::temp_directory_path() / ("normcheck_test_cache_size_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~FreshDir() {
    std::error_code ignored;  // a leftover folder in /tmp is harmless
    fs::remove_all(path, ignored);
  }
  fs::path path;
};

// last_level_cache_bytes() of a folder listing `caches`.
std::size_t last_level_of(const std::string& name, std::initializer_list<Cache> caches) {
  const FreshDir fresh(name);
  for (const Cache& c : caches) {
    const fs::path d = fresh.path / ("index" + std::to_string(c.index));
    write(d / "level", std::to_string(c.level));
    write(d / "type", c.type);
    write(d / "size", c.size);
  }
  return last_level_cache_bytes(fresh.path);
}

TEST(LastLevelCache, IsTheHighestLevelHoldingData) {
  // The L3 listed first: the order of the indexN folders does not matter.
  EXPECT_EQ(last_level_of("epyc", {{3, 3, "Unified", "32768K"},
                                   {0, 1, "Data", "48K"},
                                   {1, 1, "Instruction", "32K"},
                                   {2, 2, "Unified", "1024K"}}),
            std::size_t{32} << 20);
}

TEST(LastLevelCache, IgnoresInstructionCachesAndUnknownSizes) {
  EXPECT_EQ(last_level_of("odd", {{0, 1, "Data", "1M"}, {1, 4, "Instruction", "64M"}, {2, 3, "Unified", "lots"}}),
            std::size_t{1} << 20);
}

TEST(LastLevelCache, IsZeroWhenNotListed) {
  EXPECT_EQ(last_level_of("empty", {}), 0u);
  EXPECT_EQ(last_level_cache_bytes(fs::temp_directory_path() / "normcheck_test_cache_size_no_such_folder"), 0u);
}

// With a 32 MiB cache, a float32 forward on 4096x4096 moves 128 MiB (out of
// cache), on 4096x1024 32 MiB (in cache: not twice the cache), on 4096x2048
// exactly 64 MiB (out: at least twice); a backward moves three arrays, so on
// 4096x1536 it moves 72 MiB (out) where the forward moves 48 MiB (in).
TEST(OutOfCache, IsTwiceTheLastLevelCache) {
  const Kernel* fwd = find_kernel("layernorm_fwd.twopass");
  const Kernel* bwd = find_kernel("layernorm_bwd.twopass");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  const std::size_t cache = std::size_t{32} << 20;
  EXPECT_TRUE(out_of_cache(*fwd, {4096, 4096}, cache));
  EXPECT_FALSE(out_of_cache(*fwd, {4096, 1024}, cache));
  EXPECT_TRUE(out_of_cache(*fwd, {4096, 2048}, cache)) << "64 MiB: exactly twice";
  EXPECT_FALSE(out_of_cache(*fwd, {4095, 2048}, cache));
  EXPECT_TRUE(out_of_cache(*bwd, {4096, 1536}, cache)) << "3 arrays of 24 MiB";
  EXPECT_FALSE(out_of_cache(*fwd, {4096, 1536}, cache)) << "2 arrays of 24 MiB";
  EXPECT_FALSE(out_of_cache(*fwd, {4096, 4096}, 0)) << "an unknown cache says nothing is out of it";
}

}  // namespace
}  // namespace normcheck::bench
