#include "report.hpp"

#include <iostream>

#include "output_folder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <stdexcept>

namespace cholsim::apps {

void Report::section(std::string title) { sections_.push_back({std::move(title), {}}); }

void Report::add(std::string json_key, std::string label, nlohmann::ordered_json value, std::string text) {
  if (sections_.empty()) section("");
  sections_.back().fields.push_back({std::move(json_key), std::move(label), std::move(value), std::move(text)});
}

void Report::add_count(std::string json_key, std::string label, std::int64_t count) {
  add(std::move(json_key), std::move(label), count, format_count(count));
}

void Report::add_seconds(std::string json_key, std::string label, double seconds) {
  add(std::move(json_key), std::move(label), seconds, format_seconds(seconds));
}

void Report::add_bytes(std::string json_key, std::string label, std::int64_t bytes) {
  add(std::move(json_key), std::move(label), bytes, format_bytes(bytes));
}

void Report::add_real(std::string json_key, std::string label, double value) {
  add(std::move(json_key), std::move(label), value, format_scientific(value));
}

void Report::add_text(std::string json_key, std::string label, const std::string& text) {
  add(std::move(json_key), std::move(label), text, text);
}

nlohmann::ordered_json Report::to_json() const {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const Section& section : sections_) {
    for (const Field& field : section.fields) {
      if (field.json_key.empty()) continue;
      if (object.contains(field.json_key))
        throw std::logic_error("Report: JSON key '" + field.json_key + "' added twice");
      object[field.json_key] = field.value;
    }
  }
  return object;
}

void Report::print_text(std::ostream& out) const {
  std::size_t width = 0;
  for (const Section& section : sections_)
    for (const Field& field : section.fields) width = std::max(width, field.label.size());

  bool first = true;
  for (const Section& section : sections_) {
    if (!first) out << '\n';
    first = false;
    if (!section.title.empty()) out << section.title << '\n';
    for (const Field& field : section.fields) {
      if (field.label.empty()) continue;
      out << "  " << field.label << ':' << std::string(width - field.label.size() + 1, ' ')
          << field.text << '\n';
    }
  }
}

std::string format_count(std::int64_t count) {
  std::string digits = std::to_string(count < 0 ? -count : count);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return count < 0 ? "-" + grouped : grouped;
}

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string format_seconds(double seconds) {
  const double magnitude = std::abs(seconds);
  if (magnitude >= 1.0) return printf_string("%.3f s", seconds);
  if (magnitude >= 1e-3) return printf_string("%.1f ms", seconds * 1e3);
  return printf_string("%.1f us", seconds * 1e6);
}

std::string format_bytes(std::int64_t bytes) {
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  return format_count(bytes) + printf_string(" (%.1f MiB)", mib);
}

std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string format_scientific(double value) { return printf_string("%.3e", value); }

void publish_summary(const Report& report, OutputFolder& folder, const std::string& file_name, bool json) {
  const nlohmann::ordered_json summary = report.to_json();
  folder.write(file_name, summary.dump(2) + "\n");
  if (json) {
    std::cout << summary.dump(2) << std::endl;
  } else {
    report.print_text(std::cout);
  }
}

}  // namespace cholsim::apps
