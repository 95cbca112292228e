#pragma once
// A command's summary, built once and written either for people (aligned "key: value" lines
// grouped in sections) or for programs (one JSON object, keys in the same order).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cholsim::apps {

class OutputFolder;
class Report;

/// How a simulation command ends its run: `report` written as `file_name` (JSON) into
/// `folder`, and printed to stdout — as that JSON with `json`, else as text.
void publish_summary(const Report& report, OutputFolder& folder, const std::string& file_name, bool json);

class Report {
 public:
  /// Starts a new section; the fields added next belong to it.
  void section(std::string title);
  /// Adds a field shown as `label: text` and stored in JSON as `json_key: value`.
  /// An empty label keeps the field out of the human output (JSON-only detail), an empty
  /// json_key keeps it out of the JSON (a text-only rendering of data stored elsewhere).
  void add(std::string json_key, std::string label, nlohmann::ordered_json value, std::string text);

  // Typed shortcuts that format the human text consistently.
  void add_count(std::string json_key, std::string label, std::int64_t count);
  void add_seconds(std::string json_key, std::string label, double seconds);
  void add_bytes(std::string json_key, std::string label, std::int64_t bytes);
  void add_real(std::string json_key, std::string label, double value);  ///< %.3e
  void add_text(std::string json_key, std::string label, const std::string& text);

  /// All fields as one flat JSON object (sections only group the human output).
  [[nodiscard]] nlohmann::ordered_json to_json() const;
  /// Sections with their fields, labels padded so that the values line up.
  void print_text(std::ostream& out) const;

 private:
  struct Field {
    std::string json_key;
    std::string label;
    nlohmann::ordered_json value;
    std::string text;
  };
  struct Section {
    std::string title;
    std::vector<Field> fields;
  };
  std::vector<Section> sections_;
};

/// 107811 → "107,811".
std::string format_count(std::int64_t count);
/// Seconds with a unit chosen for readability: "532.1 ms", "2.418 s", "41.0 us".
std::string format_seconds(double seconds);
/// "123,456,789 (117.7 MiB)".
std::string format_bytes(std::int64_t bytes);
/// One double through a printf format ("%g", "%.3f"), for help texts and labels.
std::string printf_string(const char* format, double value);
/// printf-style "%.<decimals>f".
std::string format_fixed(double value, int decimals);
/// printf-style "%.3e".
std::string format_scientific(double value);

}  // namespace cholsim::apps
