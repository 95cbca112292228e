#include "plot_directory.hpp"

#include "svg_document.hpp"

namespace cholsim::apps::plots {

void PlotDirectory::write_picture(const std::string& file_name, const std::string& content, std::string caption) {
  folder_.write(file_name, content);
  pictures_.push_back({file_name, std::move(caption)});
}

void PlotDirectory::write_index(std::string_view heading) {
  // XHTML-style (every element closed, attributes quoted), so XML tools can check it too.
  std::string html =
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      "<title>" + xml_escaped(heading) + "</title>\n"
      "<style>body{font-family:sans-serif;margin:2em;} figure{margin:2em 0;} img{max-width:100%;border:1px solid #ddd;}"
      "</style>\n</head>\n<body>\n<h1>" + xml_escaped(heading) + "</h1>\n"
      "<p>Click a picture to open it alone; hover its nodes, bars and boxes for their numbers.</p>\n";
  for (const Picture& picture : pictures_) {
    const std::string file = xml_escaped(picture.file_name);
    html += "<figure>\n<a href=\"" + file + "\"><img src=\"" + file + "\" alt=\"" + xml_escaped(picture.caption) +
            "\"/></a>\n<figcaption>" + xml_escaped(picture.caption) + "</figcaption>\n</figure>\n";
  }
  html += "</body>\n</html>\n";
  folder_.write("index.html", html);
}

}  // namespace cholsim::apps::plots
