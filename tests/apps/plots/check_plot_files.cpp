// check_plot_files DIR REPORT.json: exit 0 when the folder written by
// `cholsim factor --plot DIR --json > REPORT.json` is complete and right:
//  * every expected picture and index.html is there, no *.partial is left;
//  * every file is well-formed XML (svg root for pictures, html for the index), and the
//    index shows every picture;
//  * the spy plots report the report's nnz(A) (both triangles) and nnz(L);
//  * the update-stack plot shows the report's measured peak, and with one thread and no
//    retained blocks its sequential and predicted peaks equal it;
//  * with a refactorization, the tree marks the report's number of recomputed supernodes.
// Otherwise prints each failure and exits 1.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/apps/plots/xml_well_formedness.hpp"

namespace {

namespace fs = std::filesystem;
using cholsim::apps::testing::xml_root_name;
using cholsim::apps::testing::xml_well_formedness_error;

std::vector<std::string> failures;

void fail(const std::string& what) { failures.push_back(what); }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The number written as "1,234,567" right after `marker` in `text`; -1 (and a failure) if absent.
std::int64_t count_after(const std::string& text, const std::string& marker, const std::string& file) {
  const std::size_t found = text.find(marker);
  if (found == std::string::npos) {
    fail(file + ": no '" + marker + "'");
    return -1;
  }
  std::string digits;
  for (std::size_t i = found + marker.size(); i < text.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      digits += text[i];
    } else if (text[i] != ',') {
      break;
    }
  }
  if (digits.empty()) {
    fail(file + ": no number after '" + marker + "'");
    return -1;
  }
  return std::stoll(digits);
}

void expect_equal(std::int64_t shown, std::int64_t reported, const std::string& what) {
  if (shown != reported) fail(what + ": the plot shows " + std::to_string(shown) + ", the report says " + std::to_string(reported));
}

void check_well_formed(const fs::path& path, const std::string& text, const std::string& root) {
  if (const auto error = xml_well_formedness_error(text)) {
    fail(path.filename().string() + " is not well-formed XML: " + *error);
  } else if (xml_root_name(text) != root) {
    fail(path.filename().string() + ": root element is <" + xml_root_name(text) + ">, expected <" + root + ">");
  }
}

void check_numbers(const fs::path& dir, const nlohmann::json& report) {
  expect_equal(count_after(read_file(dir / "spy_A.svg"), " - nnz ", "spy_A.svg"), report.at("nnz_A").get<std::int64_t>(),
               "nnz of P·A·Pᵀ");
  expect_equal(count_after(read_file(dir / "spy_L.svg"), " - nnz ", "spy_L.svg"), report.at("nnz_L").get<std::int64_t>(),
               "nnz of L");
  const std::string stack = read_file(dir / "update_stack.svg");
  const std::int64_t measured = report.at("peak_update_bytes").get<std::int64_t>();
  expect_equal(count_after(stack, "the peak this run measured, ", "update_stack.svg"), measured, "measured update peak");
  const bool refactor = report.contains("recomputed_supernodes");
  if (report.at("threads").get<int>() == 1 && !refactor) {
    expect_equal(count_after(stack, "Red: its peak, ", "update_stack.svg"), measured, "sequential update peak");
    expect_equal(count_after(stack, "predicted by the analysis for this schedule, ", "update_stack.svg"), measured,
                 "predicted update peak");
  }
  if (refactor) {
    const std::string tree = read_file(dir / "refactor_tree.svg");
    // The caption says "Colour: N of M supernodes recomputed".
    const std::string caption = tree.substr(std::min(tree.find("Colour: "), tree.size()));
    expect_equal(count_after(caption, "Colour: ", "refactor_tree.svg"), report.at("recomputed_supernodes").get<std::int64_t>(),
                 "recomputed supernodes");
    expect_equal(count_after(caption, " of ", "refactor_tree.svg"), report.at("supernodes").get<std::int64_t>(),
                 "supernodes of the refactorized tree");
    if (tree.find("drawn as triangles") == std::string::npos) {
      // Every supernode is drawn: count the nodes whose tooltip says they were recomputed.
      std::int64_t marked = 0;
      for (std::size_t at = tree.find("; recomputed</title>"); at != std::string::npos;
           at = tree.find("; recomputed</title>", at + 1)) {
        ++marked;
      }
      expect_equal(marked, report.at("recomputed_supernodes").get<std::int64_t>(), "nodes drawn as recomputed");
    }
  }
}

void check_folder(const fs::path& dir, const nlohmann::json& report) {
  std::vector<std::string> expected{"spy_A.svg", "spy_L.svg", "assembly_tree.svg", "level_profile.svg", "update_stack.svg",
                                    "index.html"};
  if (report.contains("recomputed_supernodes")) expected.push_back("refactor_tree.svg");
  for (const std::string& name : expected) {
    if (!fs::is_regular_file(dir / name)) fail("missing " + name);
  }
  if (!failures.empty()) return;
  const std::string index = read_file(dir / "index.html");
  check_well_formed(dir / "index.html", index, "html");
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".partial") fail("left behind: " + name);
    if (entry.path().extension() != ".svg") continue;
    check_well_formed(entry.path(), read_file(entry.path()), "svg");
    if (index.find("src=\"" + name + "\"") == std::string::npos) fail("index.html does not show " + name);
  }
  if (failures.empty()) check_numbers(dir, report);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: check_plot_files DIR REPORT.json\n";
    return 2;
  }
  try {
    std::ifstream report_file(argv[2]);
    const nlohmann::json report = nlohmann::json::parse(report_file);
    check_folder(argv[1], report);
  } catch (const std::exception& error) {
    fail(std::string("cannot check: ") + error.what());
  }
  for (const std::string& failure : failures) std::cerr << "check_plot_files: " << failure << '\n';
  if (failures.empty()) std::cout << "check_plot_files: " << argv[1] << " is complete and well-formed\n";
  return failures.empty() ? 0 : 1;
}
