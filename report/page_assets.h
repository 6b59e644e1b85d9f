// The page's own script and style (report/page/report.js and report.css), compiled into
// the library by CMake (page_assets.cpp.in) so that a report needs no files of Temper's.
#pragma once

namespace temper::report {

extern const char* const kReportScript;
extern const char* const kReportStyle;

}  // namespace temper::report
