// remat_report's progress reporter in both of its modes, with an injected clock.
#define BOOST_TEST_MODULE report_progress
#include <boost/test/unit_test.hpp>

#include "remat/report/progress.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace remat;

namespace {

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

} // namespace

BOOST_AUTO_TEST_CASE(durations_read_naturally)
{
    BOOST_TEST(report::format_duration(0.25) == "250ms");
    BOOST_TEST(report::format_duration(12.4) == "12s");
    BOOST_TEST(report::format_duration(185) == "3m05s");
    BOOST_TEST(report::format_duration(7380) == "2h03m");
}

BOOST_AUTO_TEST_CASE(string_streams_are_not_terminals)
{
    std::ostringstream out;
    BOOST_TEST(!report::is_terminal(out));
    const report::progress p(out, {.label = "x", .total = 10});
    BOOST_TEST(!p.draws_bar());
}

BOOST_AUTO_TEST_CASE(lines_come_at_each_tenth_at_most_once_a_second)
{
    double now = 0;
    std::ostringstream out;
    {
        report::progress p(out, {.label = "training",
                                 .total = 1000,
                                 .value_name = "loss",
                                 .style = report::progress_style::lines,
                                 .clock = [&] { return now; }});
        for (int i = 1; i <= 1000; ++i) {
            now = i / 100.0; // 10 s in all, exact at each tenth: one line per tenth is at most one a second
            p.update(static_cast<std::uint64_t>(i), 1.0 / i);
        }
        p.finish();
        p.finish(); // once only
    }
    const auto lines = lines_of(out.str());
    BOOST_TEST_REQUIRE(lines.size() == 11u, out.str()); // 100, 200, ..., 1000, then the final line
    BOOST_TEST(lines[0] == "training: 100/1000 (10%), loss 0.01, elapsed 1s, ETA 9s");
    BOOST_TEST(lines[4] == "training: 500/1000 (50%), loss 0.002, elapsed 5s, ETA 5s");
    BOOST_TEST(lines[10] == "training: done, 1000/1000 (100%), loss 0.001, took 10s");
    BOOST_TEST(out.str().find('\r') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(fast_work_prints_few_lines_and_slow_work_prints_by_time)
{
    double now = 0;
    std::ostringstream fast;
    {
        report::progress p(fast, {.label = "fast", .total = 100, .style = report::progress_style::lines, .clock = [&] {
                                      return now;
                                  }});
        for (int i = 1; i <= 100; ++i) {
            now = i * 0.001; // all in 0.1 s: no tenth is a second after the start
            p.update(static_cast<std::uint64_t>(i));
        }
        p.finish();
    }
    BOOST_TEST(lines_of(fast.str()).size() == 1u, fast.str()); // the final line only

    now = 0;
    std::ostringstream slow;
    {
        report::progress p(slow, {.label = "adaptive",
                                  .unit = "steps",
                                  .style = report::progress_style::lines,
                                  .line_interval = 30,
                                  .clock = [&] { return now; }}); // total unknown
        for (int i = 1; i <= 100; ++i) {
            now = i; // 100 s
            p.update(static_cast<std::uint64_t>(i) * 7);
        }
        p.finish();
    }
    const auto lines = lines_of(slow.str());
    BOOST_TEST_REQUIRE(lines.size() == 4u, slow.str()); // at 30, 60 and 90 s, then the final line
    BOOST_TEST(lines[0] == "adaptive: 210 steps, elapsed 30s");
    BOOST_TEST(lines[3] == "adaptive: done, 700 steps, took 1m40s");
}

BOOST_AUTO_TEST_CASE(a_bar_redraws_one_line_at_most_ten_times_a_second)
{
    double now = 0;
    std::ostringstream out;
    {
        report::progress p(
            out,
            {.label = "train", .total = 200, .value_name = "loss", .style = report::progress_style::bar, .clock = [&] {
                 return now;
             }});
        BOOST_TEST(p.draws_bar());
        for (int i = 1; i <= 100; ++i) { // a quarter of a second each: every update redraws
            now = i / 4.0;
            p.update(static_cast<std::uint64_t>(i), 0.5);
        }
        for (int i = 101; i <= 200; ++i) { // all within 0.1 s: none does
            now = 25 + (i - 100) / 1024.0;
            p.update(static_cast<std::uint64_t>(i), 0.5);
        }
        now = 50;
        p.finish(0.25);
    }
    const std::string text = out.str();
    BOOST_TEST(std::count(text.begin(), text.end(), '\r') == 101);
    BOOST_TEST(std::count(text.begin(), text.end(), '\n') == 1); // one line, ended once
    BOOST_TEST(text.back() == '\n');
    // Halfway: half the cells full, the count, the value, the time and the ETA, and the rest erased.
    BOOST_TEST(text.find("\rtrain [############············] 100/200 (50%), loss 0.5, elapsed 25s, ETA 25s\x1b[K\r") !=
                   std::string::npos,
               text);
    const std::string last = text.substr(text.rfind('\r'));
    BOOST_TEST(last == "\rtrain [########################] 200/200 (100%), loss 0.25, took 50s\x1b[K\n");
}

BOOST_AUTO_TEST_CASE(an_unfinished_bar_ends_its_line)
{
    std::ostringstream out;
    {
        report::progress p(out, {.label = "x", .total = 10, .style = report::progress_style::bar});
        p.update(3);
    }
    const std::string text = out.str();
    BOOST_TEST(text.back() == '\n');
    BOOST_TEST(std::count(text.begin(), text.end(), '\n') == 1);
}

BOOST_AUTO_TEST_CASE(work_that_ends_short_of_its_total_reads_as_stopped_not_done)
{
    double now = 0;
    std::ostringstream out;
    {
        report::progress p(out, {.label = "remat-stress",
                                 .total = 1000,
                                 .unit = "transfers",
                                 .style = report::progress_style::lines,
                                 .clock = [&] { return now; }});
        now = 12;
        p.update(420);
        p.finish(); // a time limit ended it
    }
    const auto lines = lines_of(out.str());
    BOOST_TEST_REQUIRE(!lines.empty());
    BOOST_TEST(lines.back() == "remat-stress: stopped, 420/1000 (42%), took 12s");

    std::ostringstream bar_out;
    {
        report::progress p(bar_out, {.label = "x", .total = 10, .style = report::progress_style::bar});
        p.update(3);
        p.finish();
    }
    BOOST_TEST(bar_out.str().find("3/10 (30%)") != std::string::npos, bar_out.str()); // not 10/10
}
