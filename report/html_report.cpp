#include "report/html_report.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/error.h"
#include "compiler/runtime/file_io.h"
#include "report/page_assets.h"

namespace temper::report {
namespace {

std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script>: "</script>" or "<!--" in a workload name or a message would
// change how the browser splits the page; '<' appears only inside JSON strings, where
// "\u003c" reads as the same character.
std::string script_safe_json(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string find_chart_js() {
  const char* env = std::getenv("TEMPER_CHARTJS");
  if (env && *env) {
    if (!std::filesystem::is_regular_file(env)) {
      throw UserError(str("TEMPER_CHARTJS=", env, " is not a file: point it at Chart.js (chart.min.js or "
                          "chart.umd.js), or unset it to use Debian's libjs-chart.js"));
    }
    return env;
  }
  for (const char* path : {"/usr/share/javascript/chart.js/chart.min.js",
                           "/usr/share/javascript/chart.js/chart.umd.js", "/usr/share/nodejs/chart.js/dist/chart.umd.js"}) {
    if (std::filesystem::is_regular_file(path)) return path;
  }
  throw UserError("the report draws its charts with Chart.js, which is not installed: apt-get install "
                  "libjs-chart.js (scripts/install-deps.sh does), or set TEMPER_CHARTJS to a chart.min.js");
}

std::string render_report_html(const nlohmann::json& data, const std::string& chart_js) {
  // Code is inlined as it is (escaping it could change what it means): it must not close its element.
  std::string lower = chart_js;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("</script") != std::string::npos) {
    throw UserError("this Chart.js contains \"</script\" and cannot be inlined into the page: use Debian's "
                    "libjs-chart.js, or point TEMPER_CHARTJS at a minified build");
  }
  std::string title = data.value("title", std::string("Temper tuning report"));
  std::ostringstream html;
  html << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
       << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       << "<title>" << escape_html(title) << "</title>\n"
       << "<style>\n" << kReportStyle << "\n</style>\n"
       << "<script>\n" << chart_js << "\n</script>\n"
       << "</head><body>\n"
       << "<script>window.TEMPER_REPORT = " << script_safe_json(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
       << ";</script>\n"
       << "<script>\n" << kReportScript << "\n</script>\n"
       << "</body></html>\n";
  return html.str();
}

void write_report(const tuning_db::Database& log, const ReportOptions& options, const std::string& path) {
  std::string chart_js = read_file(find_chart_js(), "Chart.js");
  std::string html = render_report_html(report_data(log, options), chart_js);
  std::filesystem::path target(path);
  std::filesystem::path temp = target;
  temp += ".partial";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw UserError(str("cannot write the report to ", path, ": check that its folder exists and is writable"));
    }
    out << html;
    out.close();
    if (!out) {
      std::filesystem::remove(temp);
      throw UserError(str("writing the report to ", path, " failed (disk full?)"));
    }
  }
  std::error_code error;
  std::filesystem::rename(temp, target, error);
  if (error) {
    std::filesystem::remove(temp);
    throw UserError(str("cannot write the report to ", path, " (", error.message(), ")"));
  }
}

}  // namespace temper::report
