// remat/report/run_report_json.hpp — a run's report (remat::run_report) as JSON, one way for every program.
//
// Part of remat_report (internal, not installed).
//
//     const remat::run_report r = remat::run(plan, store, x, remat::forward_step(f), remat::adjoint_step(g));
//     nlohmann::ordered_json j;
//     j["run"] = remat::report::run_report_json(r);   // steps, forward_steps, final_calls, levels, seconds, ...
//     remat::report::write_json(std::cout, j);
#pragma once

#include "remat/driver/run_report.hpp"

#include <nlohmann/json.hpp>

namespace remat::report {

/// Every field of `r` under its own name (levels as an array of objects), plus user_seconds and
/// remat_seconds.
[[nodiscard]] nlohmann::ordered_json run_report_json(const run_report& r);

} // namespace remat::report
