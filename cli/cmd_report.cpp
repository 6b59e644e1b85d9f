// temper report: a tuning log drawn as one self-contained HTML page (report/): the
// machines and their probed limits, per workload the tuning curves and the spread of the
// fastest schedules, a roofline per machine, the failures, and tables to sort, filter and
// export. The log is opened read-only.
#include <iostream>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "compiler/ir/error.h"
#include "report/html_report.h"
#include "tuning_db/sqlite_database.h"

namespace po = boost::program_options;

namespace temper::cli {

int cmd_report(const std::vector<std::string>& args) {
  const std::string usage = "usage: temper report --db FILE -o PAGE.html [--title TEXT]";
  std::string db_path, out_path;
  report::ReportOptions options;
  po::options_description desc(
      "temper report: draw a tuning log (or several merged with `temper db merge`) as one HTML page that opens "
      "without a network: tuning curves, the spread of the best schedules' repeats, a roofline per machine "
      "(`temper db probe` measures it), tables of the best times with sorting, filtering and CSV/JSON export, "
      "and the failures by kind");
  // clang-format off
  desc.add_options()
      ("db", po::value(&db_path), "the tuning log (read-only)")
      ("output,o", po::value(&out_path), "the page to write (replaced whole when it exists)")
      ("title", po::value(&options.title), "the page's title");
  // clang-format on
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "", 0, 0, positionals, vm)) return 0;
  if (db_path.empty()) throw UserError(str("missing --db FILE: the tuning log to draw\n", usage));
  if (out_path.empty()) throw UserError(str("missing -o PAGE.html: where to write the page\n", usage));

  tuning_db::SQLiteDatabase log(db_path, tuning_db::OpenMode::ReadOnly);
  options.log_path = db_path;
  report::write_report(log, options, out_path);
  std::string warning = tuning_db::unreadable_records_warning(log);
  if (!warning.empty()) std::cerr << warning << "\n";
  int64_t records = log.size();
  std::cout << "wrote " << out_path << ": " << records << (records == 1 ? " record" : " records") << " of "
            << log.workloads().size() << " workloads from " << db_path << "\n";
  if (records == 0) std::cout << "the log holds no records yet: the page says so\n";
  return 0;
}

}  // namespace temper::cli
