// Byte sizes as text: remat::parse_bytes and the tool's options over the table tests/cli/byte_sizes.json, which
// tests/python/test_bytes.py gives Python's remat.parse_bytes too (the tool refused --budget 1e3, which Python
// took, and floored 1.5 bytes to 1, which Python refused).
#define BOOST_TEST_MODULE cli_bytes
#include <boost/test/unit_test.hpp>

#include "tool_runner.hpp"

#include "remat/bytes.hpp"
#include "remat/cli/parse.hpp"
#include "remat/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

nlohmann::json table_rows()
{
    std::ifstream in(REMAT_BYTE_SIZES);
    BOOST_TEST_REQUIRE(in.good(), REMAT_BYTE_SIZES);
    return nlohmann::json::parse(in).at("rows");
}

// What remat::parse_bytes made of `text`: its bytes, "argument" or "overflow" (each naming `what` and the text).
std::string outcome(const std::string& text)
{
    try {
        return std::to_string(remat::parse_bytes(text, "the size"));
    } catch (const remat::overflow_error& e) {
        BOOST_TEST(std::string(e.what()).find("the size: \"" + text + "\"") == 0u, e.what());
        return "overflow";
    } catch (const remat::argument_error& e) {
        BOOST_TEST(std::string(e.what()).find("the size: ") == 0u, e.what());
        BOOST_TEST(std::string(e.what()).find("\"" + text + "\"") != std::string::npos, e.what());
        return "argument";
    }
}

std::string expected(const nlohmann::json& row)
{
    return row[1].is_string() ? row[1].get<std::string>() : std::to_string(row[1].get<std::uint64_t>());
}

} // namespace

BOOST_AUTO_TEST_CASE(the_parser_reads_every_row_of_the_table)
{
    const nlohmann::json rows = table_rows();
    BOOST_TEST(rows.size() > 50u);
    for (const auto& row : rows)
        BOOST_TEST(outcome(row[0].get<std::string>()) == expected(row), "\"" << row[0].get<std::string>() << "\"");
}

BOOST_AUTO_TEST_CASE(a_count_past_64_bits_is_said_while_it_is_short)
{
    for (const auto& [text, said] : std::vector<std::pair<std::string, std::string>>{
             {"2e19", "\"2e19\" is 20000000000000000000 bytes, more than"},
             {"16777216TiB", "\"16777216TiB\" is 18446744073709551616 bytes, more than"},
             {"1e99999GiB", "\"1e99999GiB\" is more than"},
             {"1e400", "\"1e400\" is more than"}}) {
        try {
            (void)remat::parse_bytes(text, "--budget");
            BOOST_ERROR(text << " was read");
        } catch (const remat::overflow_error& e) {
            BOOST_TEST(std::string(e.what()) == "--budget: " + said + " a 64-bit count holds (2^64-1)");
        }
    }
}

BOOST_AUTO_TEST_CASE(an_exponent_of_five_digits_is_weighed_against_the_fraction)
{
    // 0.<9999 zeros>1e10000 is 1 byte, 0.<9999 zeros>15e10000 1.5 bytes: not too large (a 5-digit exponent was)
    const std::string zeros(9999, '0');
    BOOST_TEST(remat::parse_bytes("0." + zeros + "1e10000", "the size") == 1u);
    BOOST_TEST(remat::parse_bytes("0." + zeros + "1e10010", "the size") == 10000000000u);
    BOOST_CHECK_THROW((void)remat::parse_bytes("0." + zeros + "15e10000", "the size"), remat::argument_error);
    BOOST_CHECK_THROW((void)remat::parse_bytes("0." + zeros + "1e10080", "the size"), remat::overflow_error);
    BOOST_CHECK_THROW((void)remat::parse_bytes("1e9999999999999999999", "the size"), remat::overflow_error);
}

BOOST_AUTO_TEST_CASE(the_tools_options_read_the_table_alike)
{
    for (const auto& row : table_rows()) {
        const auto text = row[0].get<std::string>();
        if (text.empty())
            continue; // an option given empty is not given
        if (!row[1].is_string()) {
            if (row[1].get<std::uint64_t>() == 0)
                continue; // a budget of 0 holds no snapshot: the planner's refusal, not the parser's
            const nlohmann::json j = remat::test::plan_json({"--steps", "10", "--budget", text, "--state-bytes", "1"});
            BOOST_TEST(j.at("budget_bytes").get<std::uint64_t>() == row[1].get<std::uint64_t>(), "\"" << text << "\"");
        } else {
            remat::test::check_usage_error({"plan", "--steps", "10", "--budget", text, "--state-bytes", "1"},
                                           "--budget: ");
        }
    }
}

// Every unit the tool prints (remat::cli::format_bytes: B to EiB) is one --budget reads back: it refused PiB and
// EiB. 16.0 EiB, what it prints for 2^64-1 bytes, is past a 64-bit count and refused as such.
BOOST_AUTO_TEST_CASE(the_budget_reads_every_unit_the_tool_prints)
{
    for (int k = 0; k <= 6; ++k) {
        const std::uint64_t bytes = std::uint64_t{3} << (10 * k);
        const std::string shown = remat::cli::format_bytes(bytes); // "3 B", "3.00 KiB", ..., "3.00 EiB"
        const nlohmann::json j = remat::test::plan_json({"--steps", "10", "--budget", shown, "--state-bytes", "1"});
        BOOST_TEST(j.at("budget_bytes").get<std::uint64_t>() == bytes, shown);
    }
    const std::uint64_t most = ~std::uint64_t{0};
    BOOST_TEST(remat::cli::format_bytes(most) == "16.0 EiB");
    remat::test::check_usage_error({"plan", "--steps", "10", "--budget", "16.0 EiB", "--state-bytes", "1"},
                                   "--budget: \"16.0 EiB\" is 18446744073709551616 bytes, more than a 64-bit count "
                                   "holds (2^64-1)");
}
