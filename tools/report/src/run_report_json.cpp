#include "remat/report/run_report_json.hpp"

namespace remat::report {

nlohmann::ordered_json run_report_json(const run_report& r)
{
    nlohmann::ordered_json levels = nlohmann::ordered_json::array();
    for (const level_report& l : r.levels)
        levels.push_back({{"name", l.name},
                          {"stores", l.stores},
                          {"restores", l.restores},
                          {"bytes_written", l.bytes_written},
                          {"bytes_read", l.bytes_read},
                          {"peak_slots", l.peak_slots},
                          {"peak_bytes", l.peak_bytes},
                          {"wait_seconds", l.wait_seconds},
                          {"overlapped_seconds", l.overlapped_seconds}});
    return {{"steps", r.steps},
            {"forward_steps", r.forward_steps},
            {"reverse_steps", r.reverse_steps},
            {"final_forward_steps", r.final_forward_steps},
            {"final_calls", r.final_calls},
            {"taped_steps", r.taped_steps},
            {"tape_reverses", r.tape_reverses},
            {"peak_tapes", r.peak_tapes},
            {"stores", r.stores},
            {"restores", r.restores},
            {"bytes_written", r.bytes_written},
            {"bytes_read", r.bytes_read},
            {"peak_slots", r.peak_slots},
            {"peak_snapshot_bytes", r.peak_snapshot_bytes},
            {"levels", levels},
            {"seconds", r.seconds},
            {"user_timed", r.user_timed},
            {"forward_seconds", r.forward_seconds},
            {"adjoint_seconds", r.adjoint_seconds},
            {"final_seconds", r.final_seconds},
            {"test_seconds", r.test_seconds},
            {"user_seconds", r.user_seconds()},
            {"remat_seconds", r.remat_seconds()},
            {"wait_seconds", r.wait_seconds},
            {"overlapped_seconds", r.overlapped_seconds}};
}

} // namespace remat::report
