// OutputFolder (apps/output_folder.hpp): files arrive whole or not at all, failures name the
// file and the reason (a real ENOSPC from /dev/full is "disk full"), and the byte count that
// --max-output bounds is what the folder's files hold.
#include "apps/output_folder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace cholsim::apps {
namespace {

class ScratchFolder {
 public:
  ScratchFolder()
      : path_(std::filesystem::temp_directory_path() /
              ("cholsim_output_folder_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
  }
  ~ScratchFolder() { std::filesystem::remove_all(path_); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(OutputFolder, RewrittenFileCountsOnceAndNoTemporaryRemains) {
  const ScratchFolder scratch;
  OutputFolder folder(scratch.path() / "nested");
  folder.write("a.txt", "12345");
  folder.write("b.txt", "123");
  folder.write("a.txt", "1234567");
  EXPECT_EQ(read_text(scratch.path() / "nested" / "a.txt"), "1234567");
  EXPECT_EQ(folder.bytes_held(), 10u);
  folder.remove("b.txt");
  EXPECT_EQ(folder.bytes_held(), 7u);
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder.path())) {
    EXPECT_NE(entry.path().extension(), ".partial") << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST(OutputFolder, FitsCountsReplacedFilesAtTheirNewSize) {
  const ScratchFolder scratch;
  OutputFolder folder(scratch.path(), 10);
  folder.write("a.txt", "123456");
  EXPECT_TRUE(folder.fits({{"a.txt", 10}}));
  EXPECT_FALSE(folder.fits({{"a.txt", 11}}));
  EXPECT_TRUE(folder.fits({{"b.txt", 4}}));
  EXPECT_FALSE(folder.fits({{"b.txt", 4}, {"a.txt", 7}}));
}

TEST(OutputFolder, FullDeviceIsNamedDiskFull) {
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << "/dev/full is missing";
  try {
    write_all(fd, std::string(4096, 'x'), "/dev/full");
    ADD_FAILURE() << "writing to /dev/full succeeded";
  } catch (const OutputError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot write /dev/full: disk full"), std::string::npos) << error.what();
  }
  ::close(fd);
}

TEST(OutputFolder, FolderBelowARegularFileIsNamedWithTheReason) {
  const ScratchFolder scratch;
  std::filesystem::create_directories(scratch.path());
  std::ofstream(scratch.path() / "a_file") << "not a folder";
  try {
    OutputFolder folder(scratch.path() / "a_file" / "frames");
    ADD_FAILURE() << "a folder below a regular file was accepted";
  } catch (const OutputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cannot create the output folder"), std::string::npos) << message;
    EXPECT_NE(message.find("a_file/frames: Not a directory"), std::string::npos) << message;
  }
}

TEST(OutputFolder, ByteSizesReadWithBinarySuffixes) {
  EXPECT_EQ(parse_byte_size("1048576", "--max-output"), 1048576u);
  EXPECT_EQ(parse_byte_size("64k", "--max-output"), 64u * 1024);
  EXPECT_EQ(parse_byte_size("500M", "--max-output"), 500u * 1024 * 1024);
  EXPECT_EQ(parse_byte_size("2G", "--max-output"), 2ull * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_byte_size("3T", "--max-output"), 3ull << 40);
  EXPECT_EQ(parse_byte_size("unlimited", "--max-output"), OutputFolder::unlimited);
  for (const char* bad : {"", "M", "1.5G", "12X", "-3", "10 M", "99999999999T"}) {
    EXPECT_THROW(parse_byte_size(bad, "--max-output"), std::invalid_argument) << bad;
  }
  try {
    parse_byte_size("lots", "--max-output");
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("--max-output: 'lots' is not a size"), std::string::npos);
  }
}

}  // namespace
}  // namespace cholsim::apps
