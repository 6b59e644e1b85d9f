// The report page: one self-contained HTML file holding the report's data
// (report_data.h), the page's script and style (report/page/, compiled in) and Chart.js
// from Debian's libjs-chart.js, read when the page is written, so that the file opens
// anywhere without a network.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/report_data.h"

namespace temper::report {

// Chart.js's path: $TEMPER_CHARTJS if set, else where Debian's libjs-chart.js puts it.
// UserError saying what to install when neither is there.
std::string find_chart_js();

std::string render_report_html(const nlohmann::json& data, const std::string& chart_js);

// Writes the page of `log` to path: the whole file at once (written beside it, then
// renamed over it), so a browser refreshing it during a tuning job never reads half a
// page. UserError when path's folder cannot be written.
void write_report(const tuning_db::Database& log, const ReportOptions& options, const std::string& path);

}  // namespace temper::report
