#include "level_option.hpp"

#include "remat/cli/parse.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string_view>

namespace remat::cli {
namespace {

std::vector<std::string> split(const std::string& text, char separator)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end - start));
        if (end == std::string::npos)
            return parts;
        start = end + 1;
    }
}

bool all_digits(std::string_view s)
{
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// An integer count: digits, or digits with an exponent such as 1e6.
bool looks_like_count(std::string_view s)
{
    const std::size_t e = s.find_first_of("eE");
    return e == std::string_view::npos ? all_digits(s) : all_digits(s.substr(0, e)) && all_digits(s.substr(e + 1));
}

std::optional<double> number(const std::string& text)
{
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

} // namespace

double parse_cost(const std::string& option, const std::string& text, bool positive)
{
    const std::optional<double> value = number(text);
    if (!value || *value < 0 || (positive && *value == 0))
        throw usage_error(fmt::format("{}: expected a number {} 0, got \"{}\"", option, positive ? ">" : ">=", text));
    return *value;
}

std::vector<parsed_level> parse_levels(const std::vector<std::string>& texts, std::optional<std::uint64_t> state_bytes)
{
    std::vector<parsed_level> levels;
    for (const std::string& text : texts) {
        const std::string where = fmt::format("--level \"{}\"", text);
        const std::vector<std::string> parts = split(text, ':');
        if (parts.size() != 2 && parts.size() != 4)
            throw usage_error(where + ": expected NAME:SLOTS or NAME:SLOTS:WRITE:READ, e.g. disk:inf:5:5");
        parsed_level level;
        level.text = text;
        level.spec.name = parts[0];
        if (level.spec.name.empty() || level.spec.name.find_first_of(" \t\"") != std::string::npos)
            throw usage_error(where + ": the level needs a name without spaces or quotes, e.g. host:4");
        const std::string& slots = parts[1];
        if (slots == "inf" || slots == "unlimited") {
            level.spec.slots = level_spec::unlimited;
        } else if (looks_like_count(slots)) {
            try {
                level.spec.slots = parse_count("--level", slots, 1);
            } catch (const usage_error&) {
                throw usage_error(where + ": SLOTS must be an integer >= 1, inf, or a byte size such as 16GiB, got \"" +
                                  slots + "\"");
            }
        } else {
            std::optional<std::uint64_t> bytes;
            try {
                bytes = parse_bytes("--level", slots);
            } catch (const usage_error&) {
                throw usage_error(where + ": SLOTS must be an integer >= 1, inf, or a byte size such as 16GiB, got \"" +
                                  slots + "\"");
            }
            if (!state_bytes)
                throw usage_error(where + ": a capacity in bytes needs --state-bytes (the size of one snapshot)");
            level.bytes = bytes;
            level.spec.slots = static_cast<slot_t>( // level_spec::unlimited beyond 2^63 - 1 snapshots
                std::min<std::uint64_t>(*bytes / *state_bytes, level_spec::unlimited));
            if (level.spec.slots == 0)
                throw usage_error(fmt::format("{}: {} holds no snapshot of --state-bytes {}", where,
                                              format_bytes(*bytes), format_bytes(*state_bytes)));
        }
        if (parts.size() == 4) {
            const std::optional<double> write = number(parts[2]);
            const std::optional<double> read = number(parts[3]);
            if (!write || *write < 0 || !read || *read < 0)
                throw usage_error(where + ": WRITE and READ must be numbers >= 0 (costs in forward steps), got \"" +
                                  parts[2] + "\" and \"" + parts[3] + "\"");
            level.spec.write_cost = *write;
            level.spec.read_cost = *read;
        }
        levels.push_back(std::move(level));
    }
    if (levels.size() > max_levels)
        throw usage_error(fmt::format("--level: at most {} levels, got {}", max_levels, levels.size()));
    return levels;
}

} // namespace remat::cli
