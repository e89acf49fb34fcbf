// The disk cache's one entry protocol (runtime/cache_util.h, CacheEntry), used by every backend:
// what a valid entry is, what reads as absent, and that publishing is atomic per file with the meta
// last.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/cache_util.h"

namespace tl {
namespace {
using namespace cache_util;

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tl-cache-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    opt_.cache_dir = root_;
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  std::string root_;
  CompileOptions opt_;
};

TEST_F(DiskCacheTest, PublishedEntryLoadsBackItsFiles) {
  CacheEntry e(opt_, "cuda", "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(e.dir(), root_ + "/cuda/0123456789abcdef0123456789abcdef");
  std::string bin = std::string("\x7f" "ELF\0\1\2", 7), log = "ptxas info: 32 registers";
  e.Publish({{"kernel.cubin", &bin}, {"kernel.log", &log}});
  std::string meta;
  ASSERT_TRUE(ReadFile(e.Path("kernel.meta"), &meta));
  // the format every backend writes: a header, the key, then name, size and hash of each file in order
  EXPECT_EQ(meta, "tilelang-cpp cache entry 2\nkey 0123456789abcdef0123456789abcdef\nkernel.cubin 7 " +
                      HashHex(bin) + "\nkernel.log 24 " + HashHex(log) + "\n");
  std::string b2, l2;
  ASSERT_TRUE(e.Load({{"kernel.cubin", &b2}, {"kernel.log", &l2}}));
  EXPECT_EQ(b2, bin);
  EXPECT_EQ(l2, log);
  // the CPU target's entries sit at the root
  EXPECT_EQ(CacheEntry(opt_, "", "k").dir(), root_ + "/k");
}

TEST_F(DiskCacheTest, DamagedOrForeignEntriesReadAsAbsent) {
  std::string a = "library A", b = "library B", src = "source";
  CacheEntry ea(opt_, "", "keyA"), eb(opt_, "", "keyB");
  ea.Publish({{"kernel.so", &a}, {"kernel.cc", &src}});
  eb.Publish({{"kernel.so", &b}, {"kernel.cc", &src}});
  std::string so, cc = "untouched";
  // a file set other than the one published
  EXPECT_FALSE(ea.Load({{"kernel.so", &so}}));
  // a truncated file
  WriteFile(ea.Path("kernel.so"), "library");
  EXPECT_FALSE(ea.Load({{"kernel.so", &so}, {"kernel.cc", &cc}}));
  EXPECT_EQ(cc, "untouched");  // nothing is handed out from an invalid entry
  // one byte changed, same size
  WriteFile(ea.Path("kernel.so"), "library a");
  EXPECT_FALSE(ea.Load({{"kernel.so", &so}, {"kernel.cc", &cc}}));
  // another entry's files and meta copied in: the meta names the other key
  std::string other;
  ASSERT_TRUE(ReadFile(eb.Path("kernel.meta"), &other));
  WriteFile(ea.Path("kernel.so"), b);
  WriteFile(ea.Path("kernel.meta"), other);
  EXPECT_FALSE(ea.Load({{"kernel.so", &so}, {"kernel.cc", &cc}}));
  // a FIFO in place of a file (a reader must not block) and a symlink to /dev/zero (nor read forever)
  std::remove(eb.Path("kernel.so").c_str());
  ASSERT_EQ(mkfifo(eb.Path("kernel.so").c_str(), 0644), 0);
  EXPECT_FALSE(eb.Load({{"kernel.so", &so}, {"kernel.cc", &cc}}));
  std::remove(eb.Path("kernel.meta").c_str());
  ASSERT_EQ(symlink("/dev/zero", eb.Path("kernel.meta").c_str()), 0);
  EXPECT_FALSE(eb.Load({{"kernel.so", &so}, {"kernel.cc", &cc}}));
  // publishing again replaces the squatters and makes the entry whole
  eb.Publish({{"kernel.so", &b}, {"kernel.cc", &src}});
  ASSERT_TRUE(eb.Load({{"kernel.so", &so}, {"kernel.cc", &cc}}));
  EXPECT_EQ(so, b);
  struct stat st;
  ASSERT_EQ(lstat(eb.Path("kernel.meta").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  // a meta that is missing (a half-written entry) reads as absent
  std::remove(eb.Path("kernel.meta").c_str());
  EXPECT_FALSE(eb.Load({{"kernel.so", &so}, {"kernel.cc", &cc}}));
}

TEST_F(DiskCacheTest, DisabledEntryNeitherLoadsNorWrites) {
  opt_.use_cache = false;
  CacheEntry e(opt_, "hip", "k");
  EXPECT_FALSE(e.enabled());
  std::string co = "code object";
  e.Publish({{"kernel.co", &co}});
  struct stat st;
  EXPECT_NE(stat(e.dir().c_str(), &st), 0);
  EXPECT_FALSE(e.Load({{"kernel.co", &co}}));
}

}  // namespace
}  // namespace tl
