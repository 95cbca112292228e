#pragma once
// The folder of `cholsim factor --plot DIR`: SVG files written through an OutputFolder
// (temporary name, renamed when complete; failures exit 2) and an index.html that shows
// them all in a browser.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "output_folder.hpp"

namespace cholsim::apps::plots {

class PlotDirectory {
 public:
  /// Creates `directory` if needed and checks that it can be written, so that a bad folder
  /// is reported before the factorization runs. Throws OutputError.
  explicit PlotDirectory(std::filesystem::path directory) : folder_(std::move(directory)) {}

  /// Writes `content` as `file_name` and lists it in the index with `caption`. Throws
  /// OutputError naming the file.
  void write_picture(const std::string& file_name, const std::string& content, std::string caption);

  /// Writes index.html showing every picture written so far under `heading`.
  void write_index(std::string_view heading);

  [[nodiscard]] const std::filesystem::path& path() const { return folder_.path(); }

 private:
  struct Picture {
    std::string file_name;
    std::string caption;
  };
  OutputFolder folder_;
  std::vector<Picture> pictures_;
};

}  // namespace cholsim::apps::plots
